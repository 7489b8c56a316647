package io.srdma.verbs.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.RdmaProviders;
import java.nio.ByteBuffer;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A type-2 bind racing the window's close (the host revoking a grant while its bind is posted): a
 * closed window never keeps a binding or a live rkey, whichever wins; and a bind's rule holds on
 * both emulated providers.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@SuppressWarnings({"rawtypes", "unchecked"}) // the providers' own types are package-private
class WindowBindRaceTest {
  private static final int ROUNDS = 5_000;
  private static final Object QP = new Object(); // the binding queue pair (its identity)

  @ParameterizedTest
  @ValueSource(strings = {"soft", "loopback"})
  void aClosedWindowNeverKeepsABindingOrAnRkey(String provider) throws Exception {
    ExecutorService closer = Executors.newSingleThreadExecutor(r -> new Thread(r, "window-closer"));
    try (DeviceContext ctx = RdmaProviders.firstDevice(provider).open(new DeviceOptions())) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      EmulatedMemoryRegion mr = bindable(pd);
      EmulatedProtectionDomain epd = (EmulatedProtectionDomain) pd;
      for (int i = 0; i < ROUNDS; i++) {
        MemoryWindow mw = pd.allocateMemoryWindow();
        EmulatedMemoryWindow w = (EmulatedMemoryWindow) mw;
        CyclicBarrier start = new CyclicBarrier(2);
        Future<?> closed =
            closer.submit(
                () -> {
                  start.await(5, TimeUnit.SECONDS);
                  mw.close();
                  return null;
                });
        start.await(5, TimeUnit.SECONDS);
        boolean bound = w.bind(mr, epd, mr.address(), 4096, AccessFlags.REMOTE_WRITE, QP);
        closed.get(5, TimeUnit.SECONDS);
        int round = i;
        assertNull(w.binding(), () -> "round " + round + ": the closed window kept its binding");
        if (bound) {
          assertNotSame(
              w, epd.rkeys().get(w.rkey()), () -> "round " + round + ": its rkey stayed live");
        }
      }
      mr.close();
      pd.close();
    } finally {
      closer.shutdownNow();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"soft", "loopback"})
  void aBindIsCheckedAsAnRnicChecksIt(String provider) {
    try (DeviceContext ctx = RdmaProviders.firstDevice(provider).open(new DeviceOptions())) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      ProtectionDomain other = ctx.allocateProtectionDomain();
      EmulatedProtectionDomain epd = (EmulatedProtectionDomain) pd;
      EmulatedMemoryRegion bindable = bindable(pd);
      EmulatedMemoryRegion readOnly =
          (EmulatedMemoryRegion)
              pd.registerMemory(ByteBuffer.allocateDirect(4096), AccessFlags.MW_BIND);
      EmulatedMemoryRegion noBind =
          (EmulatedMemoryRegion)
              pd.registerMemory(ByteBuffer.allocateDirect(4096), AccessFlags.LOCAL_WRITE);
      EmulatedMemoryWindow w = (EmulatedMemoryWindow) pd.allocateMemoryWindow();
      long a = bindable.address();
      int rw = AccessFlags.REMOTE_WRITE;
      assertFalse(
          w.bind(bindable, (EmulatedProtectionDomain) other, a, 16, rw, QP), "QP of another PD");
      assertFalse(w.bind(noBind, epd, noBind.address(), 16, rw, QP), "region without MW_BIND");
      assertFalse(w.bind(readOnly, epd, readOnly.address(), 16, rw, QP), "remote write, no local");
      assertFalse(w.bind(bindable, epd, a, 16, rw | AccessFlags.LOCAL_WRITE, QP), "local rights");
      assertFalse(w.bind(bindable, epd, a + 4090, 16, rw, QP), "past the region");
      assertFalse(w.bind(bindable, epd, a, -1, rw, QP), "negative length");
      assertFalse(w.bind(bindable, epd, a - 1, 16, rw, QP), "below the region");
      assertTrue(w.bind(bindable, epd, a, 16, rw, QP));
      assertFalse(w.bind(bindable, epd, a, 16, rw, QP), "already bound");
      assertTrue(
          LocalAccess.invalidate(epd.rkeys(), EmulatedMemoryWindow.class, epd, QP, w.rkey()));
      bindable.close();
      assertFalse(w.bind(bindable, epd, a, 16, rw, QP), "closed region");
      EmulatedMemoryWindow closed = (EmulatedMemoryWindow) pd.allocateMemoryWindow();
      closed.close();
      assertFalse(closed.bind(readOnly, epd, readOnly.address(), 16, AccessFlags.REMOTE_READ, QP));
      w.close();
      readOnly.close();
      noBind.close();
      pd.close();
      other.close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"soft", "loopback"})
  void aBindingServesTheQueuePairThatMadeItNotItsNumber(String provider) {
    try (DeviceContext ctx = RdmaProviders.firstDevice(provider).open(new DeviceOptions())) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      EmulatedProtectionDomain epd = (EmulatedProtectionDomain) pd;
      EmulatedMemoryRegion mr = bindable(pd);
      EmulatedMemoryWindow w = (EmulatedMemoryWindow) pd.allocateMemoryWindow();
      RemoteAccess.Target owner = target(epd);
      RemoteAccess.Target sameNumberLater = target(epd); // a QP that reused the owner's number
      assertTrue(w.bind(mr, epd, mr.address(), 64, AccessFlags.REMOTE_WRITE, owner));
      RemoteAccess access =
          new RemoteAccess(EmulatedMemoryRegion.class, EmulatedMemoryWindow.class);
      int rkey = w.rkey();
      assertTrue(
          access.resolve(epd.rkeys(), owner, rkey, mr.address(), 64, AccessFlags.REMOTE_WRITE));
      assertFalse(
          access.resolve(
              epd.rkeys(), sameNumberLater, rkey, mr.address(), 64, AccessFlags.REMOTE_WRITE));
      assertFalse(
          LocalAccess.invalidate(
              epd.rkeys(), EmulatedMemoryWindow.class, epd, sameNumberLater, rkey),
          "only the binding QP invalidates");
      assertTrue(LocalAccess.invalidate(epd.rkeys(), EmulatedMemoryWindow.class, epd, owner, rkey));
      access.clear();
      w.close();
      mr.close();
      pd.close();
    }
  }

  /** A queue pair as the access check sees it: its PD and rights (all remote ones). */
  private static RemoteAccess.Target target(EmulatedProtectionDomain pd) {
    return new RemoteAccess.Target() {
      @Override
      public Object pd() {
        return pd;
      }

      @Override
      public int accessFlags() {
        return AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
      }
    };
  }

  /** 4 KiB of {@code pd} that windows may be bound over (LOCAL_WRITE, MW_BIND). */
  private static EmulatedMemoryRegion bindable(ProtectionDomain pd) {
    return (EmulatedMemoryRegion)
        pd.registerMemory(
            ByteBuffer.allocateDirect(4096), AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND);
  }
}
