/**
 * The {@code ibv} provider: rdma-core's libibverbs through jnr-ffi. Exported verbs are bound by
 * name ({@code Native}); the verbs verbs.h declares {@code static inline} ({@code ibv_post_send},
 * {@code ibv_post_recv}, {@code ibv_poll_cq}, {@code ibv_alloc_mw}, {@code ibv_dealloc_mw}) are
 * called through the function pointers of {@code context->ops} ({@code OpsTable}). Every C struct
 * has one static layout ({@code Structs}), checked against the header by a test and cross-checked
 * at run time. Work requests are encoded into off-heap memory allocated once per queue pair and
 * patched in place. See {@link io.srdma.verbs.ibv.IbvProvider} and {@code docs/softroce.md}.
 */
package io.srdma.verbs.ibv;
