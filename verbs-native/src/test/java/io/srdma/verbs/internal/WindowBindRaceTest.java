package io.srdma.verbs.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
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
  private static final int QPN = 0x42;

  @ParameterizedTest
  @ValueSource(strings = {"soft", "loopback"})
  void aClosedWindowNeverKeepsABindingOrAnRkey(String provider) throws Exception {
    ExecutorService closer = Executors.newSingleThreadExecutor(r -> new Thread(r, "window-closer"));
    try (DeviceContext ctx = RdmaProviders.firstDevice(provider).open(new DeviceOptions())) {
      ProtectionDomain pd = ctx.allocateProtectionDomain();
      MemoryRegion mr =
          pd.registerMemory(
              ByteBuffer.allocateDirect(4096), AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND);
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
        boolean bound =
            w.bind(
                (EmulatedMemoryRegion) mr, epd, mr.address(), 4096, AccessFlags.REMOTE_WRITE, QPN);
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
      EmulatedMemoryRegion bindable =
          (EmulatedMemoryRegion)
              pd.registerMemory(
                  ByteBuffer.allocateDirect(4096), AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND);
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
          w.bind(bindable, (EmulatedProtectionDomain) other, a, 16, rw, QPN), "QP of another PD");
      assertFalse(w.bind(noBind, epd, noBind.address(), 16, rw, QPN), "region without MW_BIND");
      assertFalse(w.bind(readOnly, epd, readOnly.address(), 16, rw, QPN), "remote write, no local");
      assertFalse(w.bind(bindable, epd, a, 16, rw | AccessFlags.LOCAL_WRITE, QPN), "local rights");
      assertFalse(w.bind(bindable, epd, a + 4090, 16, rw, QPN), "past the region");
      assertFalse(w.bind(bindable, epd, a, -1, rw, QPN), "negative length");
      assertFalse(w.bind(bindable, epd, a - 1, 16, rw, QPN), "below the region");
      assertTrue(w.bind(bindable, epd, a, 16, rw, QPN));
      assertFalse(w.bind(bindable, epd, a, 16, rw, QPN), "already bound");
      assertTrue(
          LocalAccess.invalidate(epd.rkeys(), EmulatedMemoryWindow.class, epd, QPN, w.rkey()));
      bindable.close();
      assertFalse(w.bind(bindable, epd, a, 16, rw, QPN), "closed region");
      EmulatedMemoryWindow closed = (EmulatedMemoryWindow) pd.allocateMemoryWindow();
      closed.close();
      assertFalse(closed.bind(readOnly, epd, readOnly.address(), 16, AccessFlags.REMOTE_READ, QPN));
      w.close();
      readOnly.close();
      noBind.close();
      pd.close();
      other.close();
    }
  }
}
