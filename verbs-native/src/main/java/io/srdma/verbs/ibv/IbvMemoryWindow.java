package io.srdma.verbs.ibv;

import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ProtectionDomain;
import java.security.SecureRandom;

/**
 * A type-2 memory window ({@code struct ibv_mw}). With type-2 windows the application chooses the
 * rkey of each bind (verbs.h's {@code ibv_inc_rkey} only steps the low 8 "key" bits); this picks a
 * random key byte different from the current one so that the next rkey cannot be predicted.
 */
final class IbvMemoryWindow implements MemoryWindow {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final IbvProtectionDomain pd;
  private final long mw;
  private int currentKey;
  private volatile int boundRkey;
  private boolean closed;

  IbvMemoryWindow(IbvProtectionDomain pd, long mw, int initialRkey) {
    this.pd = pd;
    this.mw = mw;
    this.currentKey = initialRkey;
  }

  long handle() {
    return mw;
  }

  IbvProtectionDomain ibvPd() {
    return pd;
  }

  /** The rkey the next bind will carry: same index, a fresh random key byte. */
  synchronized int nextRkey() {
    int old = currentKey & 0xFF;
    int key = old;
    while (key == old) {
      key = RANDOM.nextInt(256);
    }
    return (currentKey & 0xFFFFFF00) | key;
  }

  /**
   * Records that a bind carrying {@code rkey} was posted. The provider sends {@code mw->rkey} with
   * the next bind as the window's current key (rxe refuses a mismatch with MW_BIND_ERR), and for
   * type-2 windows libibverbs leaves updating it to the application.
   */
  synchronized void bindPosted(int rkey) {
    currentKey = rkey;
    boundRkey = rkey;
    Native.putInt(mw + Structs.Mw.RKEY, rkey);
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public int rkey() {
    return boundRkey;
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      int rc = pd.ibvContext().ops().deallocMw(mw);
      if (rc != 0) {
        throw Errors.of("dealloc_mw", rc, "memory window");
      }
      closed = true;
    }
    pd.children().remove("memory window");
  }
}
