package io.srdma.verbs.internal;

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
  public record Binding<R>(R region, long address, long length, int access, int qpn, int rkey) {}

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

  /** Publishes a new binding under a fresh random rkey; the caller checked the window is free. */
  public final int bind(R region, long address, long length, int access, int qpn) {
    synchronized (accessLock) {
      int key = pd.rkeys().allocate(this);
      binding = new Binding<>(region, address, length, access, qpn, key);
      rkey = key;
      return key;
    }
  }

  /** Invalidates the binding with {@code key}; false when that is not the live binding. */
  public final boolean invalidate(int key, int qpn) {
    synchronized (accessLock) {
      Binding<R> b = binding;
      if (b == null || b.rkey() != key || b.qpn() != qpn) {
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
