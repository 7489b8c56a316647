/**
 * The {@code loopback} provider: an in-process RNIC whose transport is a memory copy, with the soft
 * provider's access checks, for measuring what the layers above the verbs cost when the transport
 * is free. Queue pairs connect within one JVM only; not a security boundary between processes.
 * Entry point: {@link io.srdma.verbs.loopback.LoopbackProvider}, found through the {@link
 * io.srdma.verbs.RdmaProvider} service loader (docs/verbs.md, "The loopback provider").
 */
package io.srdma.verbs.loopback;
