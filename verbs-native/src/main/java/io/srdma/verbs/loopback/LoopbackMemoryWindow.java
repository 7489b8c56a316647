package io.srdma.verbs.loopback;

import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ProtectionDomain;

/**
 * A type-2 memory window of the loopback provider. A bind publishes an immutable {@link Binding}.
 *
 * <p>Bind, invalidate and close change the binding under {@link #accessLock()}; the executing
 * thread holds the same lock while it checks that the binding it resolved is still the live one and
 * moves bytes, so once {@code LOCAL_INV} completes (or {@code close()} returns) no byte of the old
 * binding is placed or read any more.
 */
final class LoopbackMemoryWindow implements MemoryWindow {
  /** What a bind established; replaced as a whole so a request never sees half a bind. */
  record Binding(
      LoopbackMemoryRegion region, long address, long length, int access, int qpn, int rkey) {}

  private final Object accessLock = new Object();
  private final LoopbackProtectionDomain pd;
  private volatile Binding binding;
  private volatile int rkey;
  private volatile boolean closed;

  LoopbackMemoryWindow(LoopbackProtectionDomain pd) {
    this.pd = pd;
  }

  LoopbackProtectionDomain pd() {
    return pd;
  }

  /** The live binding, or null when unbound or invalidated. */
  Binding binding() {
    return binding;
  }

  boolean isClosed() {
    return closed;
  }

  /** The lock under which the binding changes and requests move bytes through it. */
  Object accessLock() {
    return accessLock;
  }

  /** Publishes a new binding under a fresh random rkey; the caller checked the window is free. */
  int bind(LoopbackMemoryRegion region, long address, long length, int access, int qpn) {
    synchronized (accessLock) {
      int key = pd.loopbackContext().rkeys().allocate(this);
      binding = new Binding(region, address, length, access, qpn, key);
      rkey = key;
      return key;
    }
  }

  /** Invalidates the binding with {@code key}; false when that is not the live binding. */
  boolean invalidate(int key, int qpn) {
    synchronized (accessLock) {
      Binding b = binding;
      if (b == null || b.rkey() != key || b.qpn() != qpn) {
        return false;
      }
      binding = null;
      pd.loopbackContext().rkeys().remove(key, this);
      return true;
    }
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public int rkey() {
    return rkey;
  }

  @Override
  public void close() {
    synchronized (accessLock) {
      if (closed) {
        return;
      }
      closed = true;
      Binding b = binding;
      binding = null;
      if (b != null) {
        pd.loopbackContext().rkeys().remove(b.rkey(), this);
      }
    }
    pd.children().remove(LoopbackProtectionDomain.MEMORY_WINDOW);
  }

  @Override
  public String toString() {
    return "LoopbackMemoryWindow{bound=" + (binding != null) + "}";
  }
}
