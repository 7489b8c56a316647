package io.srdma.verbs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.kenai.jffi.CallContext;
import com.kenai.jffi.CallingConvention;
import com.kenai.jffi.Invoker;
import com.kenai.jffi.Library;
import com.kenai.jffi.MemoryIO;
import com.kenai.jffi.Type;
import java.lang.invoke.MethodHandle;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * {@link CriticalDowncalls} bound to libc functions of the C signature classes of libibverbs' ops:
 * {@code memcmp} is {@code int f(void *, void *, size_t)} like post_send/post_recv/post_srq_recv
 * {@code (qp, wr, &bad_wr)}; {@code dlinfo} is {@code int f(void *, int, void *)} exactly like
 * poll_cq {@code (cq, n, wc)}. Each downcall is compared with the jffi call the provider otherwise
 * makes, on the same address and arguments. Where the JVM offers no downcalls (Java 18-21, Java 17
 * started without {@code --add-modules jdk.incubator.foreign --enable-native-access=ALL-UNNAMED})
 * the downcall tests skip saying why; verbs-native's {@code java17-downcalls} profile runs this
 * class on Java 17 with those options and its {@code java25-downcalls} profile on Temurin 25.
 */
class CriticalDowncallsTest {
  private static final String TEST_PROPERTY = "srdma.test.critical.calls";
  private static final MemoryIO MEMORY = MemoryIO.getInstance();
  private static final Invoker JFFI = Invoker.getInstance();
  private static final CallContext PTR3_INT =
      CallContext.getCallContext(
          Type.SINT32,
          new Type[] {Type.POINTER, Type.POINTER, Type.POINTER},
          CallingConvention.DEFAULT,
          false);
  private static final CallContext PTR_INT_PTR_INT =
      CallContext.getCallContext(
          Type.SINT32,
          new Type[] {Type.POINTER, Type.SINT32, Type.POINTER},
          CallingConvention.DEFAULT,
          false);

  /** dlinfo's requests (dlfcn.h): the namespace id and the link map of a handle. */
  private static final int RTLD_DI_LMID = 1;

  private static final int RTLD_DI_LINKMAP = 2;

  /**
   * What this JVM offers: downcalls on Java 22+, and on Java 17 exactly when it was started with
   * jdk.incubator.foreign and native access; otherwise a reason naming the options.
   */
  private static String expectedUnavailable() {
    int feature = Runtime.version().feature();
    if (feature >= 22) {
      return null;
    }
    if (feature != 17) {
      return "Java " + feature + " has no foreign-function API used here (17 with options, or 22+)";
    }
    boolean module = ModuleLayer.boot().findModule("jdk.incubator.foreign").isPresent();
    boolean access =
        java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .anyMatch(a -> a.startsWith("--enable-native-access="));
    if (!module) {
      return "Java 17 was started without jdk.incubator.foreign (its downcalls need --add-modules"
          + " jdk.incubator.foreign --enable-native-access=ALL-UNNAMED; the srdma launcher passes"
          + " them)";
    }
    return access ? null : "refused native access";
  }

  @Test
  void shouldSayWhyNotWhereTheJvmOffersNoneAndWhenTurnedOff() {
    String expected = expectedUnavailable();
    System.setProperty(TEST_PROPERTY, CriticalDowncalls.OFF);
    try {
      CriticalDowncalls off = CriticalDowncalls.unlessTurnedOff(TEST_PROPERTY);
      assertFalse(off.available());
      if (expected == null) {
        assertEquals("-D" + TEST_PROPERTY + "=jnr", off.unavailable());
      } else if (expected.equals("refused native access")) {
        assertTrue(off.unavailable().startsWith("Java 17's foreign-function API refuses native"));
        assertTrue(off.unavailable().endsWith("--enable-native-access=ALL-UNNAMED"));
      } else {
        assertEquals(expected, off.unavailable());
      }
      IllegalStateException e =
          assertThrows(IllegalStateException.class, () -> off.bind(1L, int.class, long.class));
      assertEquals("no downcalls: " + off.unavailable(), e.getMessage());
    } finally {
      System.clearProperty(TEST_PROPERTY);
    }
    CriticalDowncalls on = CriticalDowncalls.unlessTurnedOff(TEST_PROPERTY);
    assertEquals(expected == null, on.available(), String.valueOf(on.unavailable()));
    assertEquals(expected == null, CriticalDowncalls.possibleHere());
    if (expected == null) {
      assertNull(on.unavailable());
      assertEquals(
          Runtime.version().feature() == 17 ? "FFM downcalls (Java 17 incubator)" : "FFM downcalls",
          CriticalDowncalls.kind());
    } else {
      assertNull(CriticalDowncalls.kind());
    }
  }

  @Test
  void bzeroAsAVoidDowncallWritesWhatItShould() throws Throwable {
    CriticalDowncalls downcalls = downcallsOrSkip();
    long bzero = Library.getDefault().getSymbolAddress("bzero");
    assertNotEquals(0, bzero);
    MethodHandle h = downcalls.bind(bzero, void.class, long.class, long.class);
    assertEquals(
        java.lang.invoke.MethodType.methodType(void.class, long.class, long.class), h.type());
    long a = MEMORY.allocateMemory(64, true);
    try {
      for (int i = 0; i < 64; i++) {
        MEMORY.putByte(a + i, (byte) 0x5A);
      }
      h.invokeExact(a + 8, 40L);
      for (int i = 0; i < 64; i++) {
        assertEquals(i >= 8 && i < 48 ? 0 : 0x5A, MEMORY.getByte(a + i), "byte " + i);
      }
    } finally {
      MEMORY.freeMemory(a);
    }
  }

  @Test
  void memcmpAsADowncallAnswersAsJffiDoes() throws Throwable {
    CriticalDowncalls downcalls = downcallsOrSkip();
    long memcmp = Library.getDefault().getSymbolAddress("memcmp");
    assertNotEquals(0, memcmp);
    MethodHandle h = downcalls.bind(memcmp, int.class, long.class, long.class, long.class);
    long a = MEMORY.allocateMemory(64, true);
    long b = MEMORY.allocateMemory(64, true);
    try {
      for (int i = 0; i < 64; i++) {
        MEMORY.putByte(a + i, (byte) i);
        MEMORY.putByte(b + i, (byte) i);
      }
      MEMORY.putByte(b + 40, (byte) 0xF0); // b > a from byte 40 (unsigned compare)
      for (long n : new long[] {0, 1, 40, 41, 64}) {
        int jffi = (int) JFFI.invokeN3(PTR3_INT, memcmp, a, b, n);
        int down = (int) h.invokeExact(a, b, n);
        assertEquals(jffi, down, "memcmp(a, b, " + n + ")");
        assertEquals(n > 40 ? -1 : 0, Integer.signum(down), "memcmp(a, b, " + n + ")");
        assertEquals((int) JFFI.invokeN3(PTR3_INT, memcmp, b, a, n), (int) h.invokeExact(b, a, n));
      }
    } finally {
      MEMORY.freeMemory(a);
      MEMORY.freeMemory(b);
    }
  }

  @Test
  void dlinfoAsADowncallAnswersAsJffiDoesWithAnIntInTheMiddle() throws Throwable {
    CriticalDowncalls downcalls = downcallsOrSkip();
    long dlopen = Library.getDefault().getSymbolAddress("dlopen");
    long dlinfo = Library.getDefault().getSymbolAddress("dlinfo");
    assertNotEquals(0, dlopen);
    assertNotEquals(0, dlinfo);
    // dlopen(NULL, RTLD_LAZY): the main program's handle, never closed (it is the process)
    long self = (long) downcalls.bind(dlopen, long.class, long.class, int.class).invokeExact(0L, 1);
    assertNotEquals(0, self);
    MethodHandle h = downcalls.bind(dlinfo, int.class, long.class, int.class, long.class);
    long out = MEMORY.allocateMemory(8, true);
    try {
      for (int request : new int[] {RTLD_DI_LMID, RTLD_DI_LINKMAP, 9999, -1}) {
        MEMORY.putLong(out, 0x5A5A5A5AL);
        int jffi = (int) JFFI.invokeN3(PTR_INT_PTR_INT, dlinfo, self, request, out);
        long jffiOut = MEMORY.getLong(out);
        MEMORY.putLong(out, 0x5A5A5A5AL);
        int down = (int) h.invokeExact(self, request, out);
        assertEquals(jffi, down, "dlinfo(self, " + request + ", out)");
        assertEquals(jffiOut, MEMORY.getLong(out), "dlinfo(self, " + request + ", out)'s *out");
        boolean known = request == RTLD_DI_LMID || request == RTLD_DI_LINKMAP;
        assertEquals(known ? 0 : -1, down, "dlinfo(self, " + request + ", out)");
      }
      assertEquals(0, (int) h.invokeExact(self, RTLD_DI_LMID, out));
      assertEquals(0L, MEMORY.getLong(out), "LM_ID_BASE");
    } finally {
      MEMORY.freeMemory(out);
    }
  }

  @Test
  void shouldBindBySymbolInTheFirstLibraryThatLoads() throws Throwable {
    CriticalDowncalls downcalls = downcallsOrSkip();
    MethodHandle h =
        downcalls.bind(
            List.of("libsrdma-no-such-library.so.9", "libc.so.6"),
            "memcmp",
            int.class,
            long.class,
            long.class,
            long.class);
    long a = MEMORY.allocateMemory(8, true);
    try {
      assertEquals(0, (int) h.invokeExact(a, a, 8L));
    } finally {
      MEMORY.freeMemory(a);
    }
  }

  @Test
  void shouldNameWhatCouldNotBeBound() {
    CriticalDowncalls downcalls = downcallsOrSkip();
    long memcmp = Library.getDefault().getSymbolAddress("memcmp");
    assertEquals(
        "cannot bind a NULL function pointer",
        assertThrows(IllegalArgumentException.class, () -> downcalls.bind(0L, int.class))
            .getMessage());
    String type =
        assertThrows(
                IllegalArgumentException.class,
                () -> downcalls.bind(memcmp, int.class, long.class, double.class))
            .getMessage();
    assertTrue(type.startsWith("binding the function at 0x"), type);
    assertTrue(
        type.endsWith(
            "cannot bind a double: downcalls here take only int and long, and return those or"
                + " void"),
        type);
    String symbol =
        assertThrows(
                IllegalArgumentException.class,
                () -> downcalls.bind(List.of("libc.so.6"), "srdma_no_such_symbol", int.class))
            .getMessage();
    assertEquals(
        "binding srdma_no_such_symbol of libc.so.6 failed: libc.so.6 has no symbol"
            + " srdma_no_such_symbol",
        symbol);
    String library =
        assertThrows(
                IllegalArgumentException.class,
                () -> downcalls.bind(List.of("libsrdma-no-such-library.so.9"), "f", int.class))
            .getMessage();
    assertTrue(
        library.startsWith("binding f failed: none of [libsrdma-no-such-library.so.9] loads ("),
        library);
  }

  private static CriticalDowncalls downcallsOrSkip() {
    CriticalDowncalls downcalls = CriticalDowncalls.unlessTurnedOff(TEST_PROPERTY);
    Assumptions.assumeTrue(
        downcalls.available(), () -> "needs downcalls: " + downcalls.unavailable());
    return downcalls;
  }
}
