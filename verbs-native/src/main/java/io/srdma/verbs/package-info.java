/**
 * The verbs API, modelled on libibverbs: providers ({@link io.srdma.verbs.RdmaProvider}), devices,
 * protection domains, memory regions and type-2 windows, completion queues, RC queue pairs, work
 * requests and completions. Code written against it runs on the {@code soft} provider (RDMA over
 * TCP, any machine) and on {@code ibv} (libibverbs).
 *
 * <p>Hot path: work requests and completions are reusable objects; posting and polling allocate
 * nothing. Failures of posted work are completions with a status, not exceptions; {@link
 * io.srdma.verbs.VerbsException} is for verbs that fail at once.
 */
package io.srdma.verbs;
