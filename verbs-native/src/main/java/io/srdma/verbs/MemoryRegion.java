package io.srdma.verbs;

import java.nio.ByteBuffer;

/** Registered memory ({@code struct ibv_mr}). */
public interface MemoryRegion extends AutoCloseable {
  /** The domain it belongs to. */
  ProtectionDomain protectionDomain();

  /** Virtual address of the first byte, as used in SGEs and remote addresses. */
  long address();

  /** Length in bytes. */
  long length();

  /** Local key, used in SGEs. */
  int lkey();

  /** Remote key, given to peers for one-sided access (only useful with REMOTE_* rights). */
  int rkey();

  /** The access flags it was registered with. */
  int access();

  /** A view of the registered bytes (position 0, limit {@link #length()}); shares the memory. */
  ByteBuffer buffer();

  /** Deregisters ({@code ibv_dereg_mr}); the rkey and lkey stop working at once. */
  @Override
  void close();
}
