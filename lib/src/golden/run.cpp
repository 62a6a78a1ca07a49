// Generating goldens into a folder with a manifest, resumably and `jobs` at a time
// (pao/golden/run.hpp).
#include "pao/golden/run.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "pao/core/error.hpp"
#include "pao/golden/integrity.hpp"
#include "pao/io/atomic_file.hpp"

namespace pao::golden {

namespace fs = std::filesystem;

namespace {

bool up_to_date(const std::optional<ManifestEntry>& e, const std::string& parameters,
                const GoldenRunOptions& o) {
  return e && e->parameters == parameters && e->pao_version == PAO_VERSION && e->format == o.format &&
         e->outputs == to_string(o.outputs) && !golden_hash_mismatch(o.out_dir, *e);
}

}  // namespace

GoldenRunResult run_golden(const std::vector<cases::Case>& cases, const GoldenRunOptions& options) {
  std::set<std::string> ids;
  for (const auto& c : cases)
    require(ids.insert(c.id).second, "golden: the case id '", c.id, "' appears twice");
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  require(!ec && fs::is_directory(options.out_dir), "golden: cannot create the output folder ",
          options.out_dir.string(), ec ? ": " + ec.message() : "");

  GoldenRunResult result;
  // Before any case is computed: the folder takes files, and what a killed run left is gone.
  try {
    const fs::path probe = options.out_dir / ".pao-write-probe";
    write_file_atomically(probe, std::span<const std::byte>());
    fs::remove(probe);
  } catch (const std::exception& e) {
    fail("golden: cannot write to the output folder ", options.out_dir.string(), ": ", e.what());
  }
  result.stale_temporaries_removed = remove_stale_temporaries(options.out_dir);
  result.manifest_path = options.out_dir / manifest_file_name(options.shard);
  Manifest manifest;
  if (fs::exists(result.manifest_path)) {
    try {
      manifest = read_manifest(result.manifest_path);
    } catch (const Error& e) {
      if (!options.force)
        fail(e.what(),
             " (pao golden --force starts a new manifest: every case of this run is regenerated and "
             "its entry rewritten)");
      result.manifest_restarted = true;  // --force: a new manifest, every case regenerated
    }
  }
  manifest.suite = options.suite;
  manifest.full = options.full;
  manifest.shard = options.shard;
  manifest.golden_flags = options.golden_flags;
  // What the complete folder holds, recorded before the first case: a run killed half-way leaves a
  // manifest that knows which cases are missing (golden/folder.hpp, require_complete).
  std::vector<std::string> run_ids = options.suite_cases;
  if (run_ids.empty())
    for (const auto& c : cases) run_ids.push_back(c.id);
  manifest.expect_cases(run_ids, run_command(manifest));
  write_manifest(result.manifest_path, manifest);

  std::mutex mutex;  // guards manifest, result and on_event
  auto emit = [&](GoldenEvent e) {
    if (options.on_event) options.on_event(e);
  };
  std::atomic<std::size_t> next{0};
  const std::int32_t jobs = std::max<std::int32_t>(
      1, std::min<std::int32_t>(options.jobs, static_cast<std::int32_t>(cases.size())));
  const int omp_threads = std::max(1, omp_get_max_threads() / jobs);

  auto worker = [&] {
    if (jobs > 1) omp_set_num_threads(omp_threads);
    for (std::size_t k = next++; k < cases.size(); k = next++) {
      const cases::Case& c = cases[k];
      const std::string parameters = cases::case_to_json(c);
      GoldenEvent event;
      event.index = k;
      event.golden_case = &c;
      event.cost = estimated_cost(c);
      std::optional<ManifestEntry> previous;
      {
        std::lock_guard lock(mutex);
        if (const ManifestEntry* e = manifest.find(c.id)) previous = *e;
      }
      // Hashing a large golden takes a while: outside the lock.
      if (!options.force && up_to_date(previous, parameters, options)) {
        std::lock_guard lock(mutex);
        ++result.skipped;
        event.kind = GoldenEvent::Kind::skipped;
        event.bytes = previous->bytes;
        emit(event);
        continue;
      }
      {
        std::lock_guard lock(mutex);
        event.kind = GoldenEvent::Kind::started;
        emit(event);
      }
      const auto t0 = std::chrono::steady_clock::now();
      try {
        const GoldenTensors golden = make_golden(c, options.outputs);
        const WrittenGolden w = write_golden(golden, options.out_dir, options.format);
        event.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::lock_guard lock(mutex);
        manifest.upsert(ManifestEntry{c.id, to_string(c.kernel), w.file, options.format, w.sha256, w.bytes,
                                      PAO_VERSION, parameters, to_string(options.outputs),
                                      run_command(manifest)});
        write_manifest(result.manifest_path, manifest);
        ++result.written;
        event.kind = GoldenEvent::Kind::written;
        event.bytes = w.bytes;
        emit(event);
      } catch (const std::exception& e) {
        event.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::lock_guard lock(mutex);
        result.failures.emplace_back(c.id, e.what());
        event.kind = GoldenEvent::Kind::failed;
        event.message = e.what();
        emit(event);
      }
    }
  };

  if (jobs == 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (std::int32_t j = 0; j < jobs; ++j) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
  }
  // Write the manifest even when every case was skipped (the suite or shard fields may be new).
  write_manifest(result.manifest_path, manifest);
  return result;
}

}  // namespace pao::golden
