package io.srdma.verbs;

/**
 * A type-2 memory window ({@code struct ibv_mw}): a remote key over a sub-range of a memory region,
 * bound to exactly one queue pair by a BIND_MW work request, revoked by LOCAL_INV. Each bind gives
 * a new rkey; the previous one stops working.
 */
public interface MemoryWindow extends AutoCloseable {
  /** The domain it belongs to. */
  ProtectionDomain protectionDomain();

  /**
   * The rkey of the latest bind posted; valid for remote access once that bind completed
   * successfully, until it is invalidated. Zero before the first bind.
   */
  int rkey();

  /** Deallocates the window ({@code ibv_dealloc_mw}); its rkey stops working at once. */
  @Override
  void close();
}
