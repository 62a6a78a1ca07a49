// LD_PRELOADed into a CUDA 13 program run under GPGPU-Sim 4.2 (tools/gpgpusim/run.sh).
//
// The program is linked against GPGPU-Sim's libcudart (patchelf renames libcudart.so.13 to
// libcudart.so.11.0), which implements the CUDA 11 runtime API. CUDA 13 programs also call a few
// entry points that GPGPU-Sim does not have; this file supplies them on top of GPGPU-Sim's:
//   - __cudaGetKernel / __cudaLaunchKernel(_ptsz): CUDA 13's kernel launch stubs (host_runtime.h)
//     look up a handle for the host stub and launch through it. The handle here is the host stub's
//     address itself, which is what GPGPU-Sim's cudaLaunchKernel takes.
//   - cudaGetDeviceProperties (and CUDA 12's _v2 name): CUDA 13's struct layout, which is not
//     CUDA 11's, so GPGPU-Sim's own struct cannot be copied; filled from the simulator's
//     cudaDeviceGetAttribute answers.
//   - cudaDeviceGetAttribute for the attributes GPGPU-Sim aborts on (97: max shared memory per
//     block with opt-in; 106: CTAs per SM; 111: shared memory reserved per CTA) and those it
//     answers with a GTX 1080 Ti's numbers whatever the config (13: SM clock, 36: memory clock,
//     37: bus width, 38: L2 size), answered from the simulator's configuration: the
//     gpgpusim.config of the working folder (run.sh writes it there), the last value of an option
//     winning as in the simulator.
//   - cudaMallocAsync / cudaFreeAsync: mapped onto cudaMalloc / cudaFree (the simulator runs one
//     stream in order).
// Built against CUDA 13's headers (the ABI the program was compiled for).
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
typedef cudaError_t (*attribute_fn)(int *, enum cudaDeviceAttr, int);
typedef cudaError_t (*malloc_fn)(void **, size_t);
typedef cudaError_t (*free_fn)(void *);

static void *simulator_symbol(const char *name) {
  void *symbol = dlsym(RTLD_NEXT, name);
  if (symbol == NULL) {
    fprintf(stderr, "pao gpgpusim shim: GPGPU-Sim's libcudart has no %s\n", name);
    abort();
  }
  return symbol;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_stub) {
  *kernel = (cudaKernel_t)host_stub;
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                               size_t shared_bytes, cudaStream_t stream) {
  static launch_fn launch = NULL;
  if (launch == NULL) launch = (launch_fn)simulator_symbol("cudaLaunchKernel");
  return launch((const void *)kernel, grid, block, args, shared_bytes, stream);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                    size_t shared_bytes, cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, grid, block, args, shared_bytes, stream);
}

static attribute_fn simulator_attribute(void) {
  static attribute_fn get = NULL;
  if (get == NULL) get = (attribute_fn)simulator_symbol("cudaDeviceGetAttribute");
  return get;
}

static int attribute(enum cudaDeviceAttr attr, int device) {
  int value = 0;
  simulator_attribute()(&value, attr, device);
  return value;
}

/// The last value of `option` in ./gpgpusim.config (the text after the option name, trimmed), or
/// NULL. The returned string is static: copy it before the next call.
static const char *config_value(const char *option) {
  static char found[256];
  char line[1024];
  FILE *f = fopen("gpgpusim.config", "r");
  int have = 0;
  if (f == NULL) return NULL;
  while (fgets(line, sizeof line, f) != NULL) {
    const size_t n = strlen(option);
    if (strncmp(line, option, n) != 0 || (line[n] != ' ' && line[n] != '\t')) continue;
    const char *v = line + n;
    while (*v == ' ' || *v == '\t') ++v;
    snprintf(found, sizeof found, "%s", v);
    found[strcspn(found, " \t\r\n#")] = '\0';
    have = 1;
  }
  fclose(f);
  return have ? found : NULL;
}

static double config_number(const char *option, int field) {  // field-th of a ':'-separated list
  const char *v = config_value(option);
  if (v == NULL) {
    fprintf(stderr, "pao gpgpusim shim: gpgpusim.config has no %s\n", option);
    abort();
  }
  for (int i = 0; i < field; ++i) {
    v = strchr(v, ':');
    if (v == NULL) {
      fprintf(stderr, "pao gpgpusim shim: %s has no field %d\n", option, field);
      abort();
    }
    ++v;
  }
  return atof(v);
}

/// The attributes the simulator gets wrong or aborts on, from its configuration; 0 if not one.
static int attribute_from_config(enum cudaDeviceAttr attr, int *value) {
  switch ((int)attr) {
    case 13:  // cudaDevAttrClockRate, kHz: the core clock of -gpgpu_clock_domains
      *value = (int)(config_number("-gpgpu_clock_domains", 0) * 1000);
      return 1;
    case 36:  // cudaDevAttrMemoryClockRate, kHz: the DRAM clock of -gpgpu_clock_domains
      *value = (int)(config_number("-gpgpu_clock_domains", 3) * 1000);
      return 1;
    case 37:  // cudaDevAttrGlobalMemoryBusWidth, bits: channels x bytes per channel x 8
      *value = (int)(config_number("-gpgpu_n_mem", 0) * config_number("-gpgpu_dram_buswidth", 0) * 8);
      return 1;
    case 38:  // cudaDevAttrL2CacheSize: sets x line x ways (-gpgpu_cache:dl2 S:sets:line:ways) per sub-partition
      *value = (int)(config_number("-gpgpu_cache:dl2", 1) * config_number("-gpgpu_cache:dl2", 2) *
                     config_number("-gpgpu_cache:dl2", 3) * config_number("-gpgpu_n_mem", 0) *
                     config_number("-gpgpu_n_sub_partition_per_mchannel", 0));
      return 1;
    case 106:  // cudaDevAttrMaxBlocksPerMultiprocessor
      *value = (int)config_number("-gpgpu_shader_cta", 0);
      return 1;
    case 111:  // cudaDevAttrReservedSharedMemoryPerBlock: the simulator reserves none
      *value = 0;
      return 1;
    default:
      return 0;
  }
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
  if (attribute_from_config(attr, value)) return cudaSuccess;
  if (attr == cudaDevAttrMaxSharedMemoryPerBlockOptin) {
    // GPGPU-Sim aborts on this one; its per-block limit is -gpgpu_shmem_per_block, which is
    // what it reports as sharedMemPerBlock (attribute 8).
    *value = attribute(cudaDevAttrMaxSharedMemoryPerBlock, device);
    return cudaSuccess;
  }
  return simulator_attribute()(value, attr, device);
}

cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device) {
  memset(prop, 0, sizeof *prop);
  snprintf(prop->name, sizeof prop->name, "GPGPU-Sim");
  prop->major = attribute(cudaDevAttrComputeCapabilityMajor, device);
  prop->minor = attribute(cudaDevAttrComputeCapabilityMinor, device);
  prop->multiProcessorCount = attribute(cudaDevAttrMultiProcessorCount, device);
  prop->warpSize = attribute(cudaDevAttrWarpSize, device);
  prop->maxThreadsPerBlock = attribute(cudaDevAttrMaxThreadsPerBlock, device);
  prop->maxThreadsPerMultiProcessor = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device);
  prop->sharedMemPerBlock = (size_t)attribute(cudaDevAttrMaxSharedMemoryPerBlock, device);
  prop->sharedMemPerBlockOptin = prop->sharedMemPerBlock;
  prop->sharedMemPerMultiprocessor =
      (size_t)attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  prop->regsPerBlock = attribute(cudaDevAttrMaxRegistersPerBlock, device);
  prop->regsPerMultiprocessor = attribute(cudaDevAttrMaxRegistersPerMultiprocessor, device);
  prop->totalConstMem = (size_t)attribute(cudaDevAttrTotalConstantMemory, device);
  for (int i = 0; i < 3; ++i) {
    prop->maxThreadsDim[i] = attribute((enum cudaDeviceAttr)(cudaDevAttrMaxBlockDimX + i), device);
    prop->maxGridSize[i] = attribute((enum cudaDeviceAttr)(cudaDevAttrMaxGridDimX + i), device);
  }
  prop->totalGlobalMem = (size_t)32 << 30;  // the simulator does not model a capacity
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
  return cudaGetDeviceProperties_v2(prop, device);
}

cudaError_t cudaMallocAsync(void **pointer, size_t bytes, cudaStream_t stream) {
  (void)stream;
  static malloc_fn allocate = NULL;
  if (allocate == NULL) allocate = (malloc_fn)simulator_symbol("cudaMalloc");
  return allocate(pointer, bytes);
}

cudaError_t cudaFreeAsync(void *pointer, cudaStream_t stream) {
  (void)stream;
  static free_fn release = NULL;
  if (release == NULL) release = (free_fn)simulator_symbol("cudaFree");
  return release(pointer);
}
