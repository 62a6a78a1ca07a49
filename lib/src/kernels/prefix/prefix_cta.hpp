// One unit of prefix work: the CTAs of all query heads that share one KV head, for one
// (sequence, query tile). Each head's arithmetic is exactly that of its own CTA; grouping them
// only lets the CPU decode each K/V tile once for all of them.
#pragma once

#include "kernels/prefix/prefix_problem.hpp"

namespace pao::detail {

/// Runs the CTAs (cta.seq, kv_head * G + g, cta.m_tile) for g < G, where `cta` is any of them
/// (non-empty). Writes out[(g * cta.num_rows() + i) * head_size + d] for query row
/// cta.query_begin + i: normalised, before the rounding to the output dtype.
void run_prefix_cta_exact(const PrefixProblem& p, const PrefixCta& cta, double* out);
void run_prefix_cta_kernel(const PrefixProblem& p, const PrefixCta& cta, float* out);

}  // namespace pao::detail
