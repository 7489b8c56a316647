package io.srdma.verbs.internal;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ProtectionDomain;

/**
 * A type-2 memory window of an emulated provider (soft, loopback). A bind publishes an immutable
 * {@link Binding}.
 *
 * <p>Bind, invalidate and close change the binding under {@link #accessLock()}; the thread that
 * executes a request holds the same lock while it checks that the binding it resolved is still the
 * live one and moves bytes, so once {@code LOCAL_INV} completes (or {@code close()} returns) no
 * byte of the old binding is placed or read any more. Thread-safe. Not API.
 *
 * @param <P> the provider's protection domain
 * @param <R> the provider's memory region
 */
public abstract class EmulatedMemoryWindow<
        P extends EmulatedProtectionDomain, R extends EmulatedMemoryRegion<P>>
    implements MemoryWindow {
  /**
   * What a bind established; replaced as a whole so a request never sees half a bind.
   *
   * @param <R> the provider's memory region
   */
  public record Binding<R>(R region, long address, long length, int access, Object qp, int rkey) {}

  private final Object accessLock = new Object();
  private final P pd;
  private volatile Binding<R> binding;
  private volatile int rkey;
  private volatile boolean closed;

  protected EmulatedMemoryWindow(P pd) {
    this.pd = pd;
  }

  /** The domain this window belongs to. */
  public final P pd() {
    return pd;
  }

  /** The live binding, or null when unbound or invalidated. */
  public final Binding<R> binding() {
    return binding;
  }

  public final boolean isClosed() {
    return closed;
  }

  /** The lock under which the binding changes and requests move bytes through it. */
  public final Object accessLock() {
    return accessLock;
  }

  /**
   * A type-2 bind of {@code [address, address+length)} of {@code region} with {@code rights},
   * posted on queue pair {@code qp} of {@code qpPd}; checked as an RNIC does: the window and the
   * region belong to the QP's PD, neither is closed, the window is not bound, the region allows
   * MW_BIND, the rights are remote read/write only (remote write only over a locally writable
   * region), and the range lies inside the region. Checked and published under the window's and
   * then the region's access lock (the order a request's move takes), so a concurrent {@link
   * #close} or the region's close either refuses the bind or ends the binding it made: a closed
   * window or region never keeps a live rkey.
   *
   * <p>The binding names the queue pair object itself, not its number (as rxe does): a QP number
   * reused after its QP closed never inherits a binding.
   *
   * @return true when bound under a fresh random rkey ({@link #rkey()}); false: MW_BIND_ERR
   */
  public final boolean bind(R region, P qpPd, long address, long length, int rights, Object qp) {
    if (region.pd() != qpPd || pd != qpPd) {
      return false;
    }
    synchronized (accessLock) {
      synchronized (region.accessLock()) {
        boolean ok =
            !closed
                && !region.isClosed()
                && binding == null
                && AccessFlags.has(region.access(), AccessFlags.MW_BIND)
                && (rights & ~(AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE)) == 0
                && (!AccessFlags.has(rights, AccessFlags.REMOTE_WRITE)
                    || AccessFlags.has(region.access(), AccessFlags.LOCAL_WRITE))
                && length >= 0
                && region.offsetOf(address, length) >= 0;
        if (!ok) {
          return false;
        }
        int key = pd.rkeys().allocate(this);
        binding = new Binding<>(region, address, length, rights, qp, key);
        rkey = key;
        return true;
      }
    }
  }

  /** Invalidates the binding with {@code key}; false when that is not the live binding. */
  public final boolean invalidate(int key, Object qp) {
    synchronized (accessLock) {
      Binding<R> b = binding;
      if (b == null || b.rkey() != key || b.qp() != qp) {
        return false;
      }
      binding = null;
      pd.rkeys().remove(key, this);
      return true;
    }
  }

  @Override
  public final ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public final int rkey() {
    return rkey;
  }

  @Override
  public final void close() {
    synchronized (accessLock) {
      if (closed) {
        return;
      }
      closed = true;
      Binding<R> b = binding;
      binding = null;
      if (b != null) {
        pd.rkeys().remove(b.rkey(), this);
      }
    }
    pd.children().remove(EmulatedProtectionDomain.MEMORY_WINDOW);
  }

  @Override
  public final String toString() {
    return getClass().getSimpleName() + "{bound=" + (binding != null) + "}";
  }
}
