package io.srdma.verbs.ibv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.kenai.jffi.Library;
import io.srdma.verbs.internal.CriticalDowncalls;
import org.junit.jupiter.api.Test;

/**
 * {@link OpsTable} over a fake {@code struct ibv_context} whose ops are libc functions of the same
 * C signatures (no RDMA device needed): post_send, post_recv and post_srq_recv are {@code memcmp}
 * ({@code int f(void *, void *, size_t)}), poll_cq is {@code dlinfo} ({@code int f(void *, int,
 * void *)}). Where the JVM offers downcalls (Java 22+, Java 17 with the incubator's options) the
 * four go through them, said by {@link OpsTable#binding()}, and answer as the jffi calls do;
 * elsewhere, or with {@code -Dsrdma.ibv.calls=jnr}, the binding says jffi and why (verbs-native's
 * {@code java17-downcalls} and {@code java25-downcalls} profiles run this class both ways). The
 * real ops are exercised in the Soft-RoCE guest (docs/softroce.md).
 */
class OpsTableTest {
  private static final int RTLD_DI_LMID = 1;

  @Test
  void theBindingInUseIsNamedAndTheCallsAnswerAsJffiDoes() {
    boolean turnedOff = CriticalDowncalls.OFF.equals(System.getProperty(OpsTable.PROPERTY));
    long memcmp = Library.getDefault().getSymbolAddress("memcmp");
    long dlinfo = Library.getDefault().getSymbolAddress("dlinfo");
    long dlopen = Library.getDefault().getSymbolAddress("dlopen");
    assertNotEquals(0, memcmp);
    assertNotEquals(0, dlinfo);
    long context = Native.allocate(Structs.Context.OPS_POST_RECV + 8L);
    long a = Native.allocate(64);
    long b = Native.allocate(64);
    try {
      Native.putLong(context + Structs.Context.OPS_POST_SEND, memcmp);
      Native.putLong(context + Structs.Context.OPS_POST_RECV, memcmp);
      Native.putLong(context + Structs.Context.OPS_POST_SRQ_RECV, memcmp);
      Native.putLong(context + Structs.Context.OPS_POLL_CQ, dlinfo);
      OpsTable ops = new OpsTable(context);

      assertEquals(expectedBinding(), OpsTable.binding());
      assertEquals(CriticalDowncalls.possibleHere() && !turnedOff, ops.downcalls());

      Native.putByte(b + 10, (byte) 1);
      for (long n : new long[] {0, 10, 11, 64}) {
        int jffi = (int) Native.INVOKER.invokeN3(Native.PTR3_INT, memcmp, a, b, n);
        assertEquals(n > 10 ? -1 : 0, Integer.signum(jffi));
        assertEquals(jffi, ops.postSend(a, b, n), "post_send as memcmp(a, b, " + n + ")");
        assertEquals(jffi, ops.postRecv(a, b, n), "post_recv as memcmp(a, b, " + n + ")");
        assertEquals(jffi, ops.postSrqRecv(a, b, n), "post_srq_recv as memcmp(a, b, " + n + ")");
        assertEquals(-jffi, ops.postSend(b, a, n), "post_send as memcmp(b, a, " + n + ")");
      }

      long self = Native.INVOKER.invokeN2(Native.PTR_INT_PTR, dlopen, 0, 1); // dlopen(NULL, LAZY)
      assertNotEquals(0, self);
      for (int request : new int[] {RTLD_DI_LMID, 9999}) {
        int jffi = (int) Native.INVOKER.invokeN3(Native.PTR_INT_PTR_INT, dlinfo, self, request, a);
        assertEquals(request == RTLD_DI_LMID ? 0 : -1, jffi);
        assertEquals(jffi, ops.pollCq(self, request, a), "poll_cq as dlinfo(self, " + request);
      }
    } finally {
      Native.free(b);
      Native.free(a);
      Native.free(context);
    }
  }

  /** What {@link OpsTable#binding()} must say in this JVM with this test's properties. */
  static String expectedBinding() {
    boolean turnedOff = CriticalDowncalls.OFF.equals(System.getProperty(OpsTable.PROPERTY));
    if (CriticalDowncalls.possibleHere() && !turnedOff) {
      return Runtime.version().feature() == 17
          ? "FFM downcalls (Java 17 incubator)"
          : "FFM downcalls";
    }
    return "jffi, not downcalls: "
        + (CriticalDowncalls.possibleHere()
            ? "-D" + OpsTable.PROPERTY + "=jnr"
            : CriticalDowncalls.unlessTurnedOff(OpsTable.PROPERTY).unavailable());
  }
}
