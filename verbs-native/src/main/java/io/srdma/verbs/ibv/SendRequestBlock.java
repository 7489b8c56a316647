package io.srdma.verbs.ibv;

import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteOrder;

/**
 * Off-heap {@code ibv_send_wr}s with their {@code ibv_sge} arrays, allocated once per queue pair:
 * each slot's {@code sg_list} points at its own SGEs from the start, and posting only patches the
 * fields that change, so posting a WRITE is a few stores and one native call.
 *
 * <pre>
 *   slot i:  [ ibv_send_wr (128 B) ]  sg_list ──► [ ibv_sge × maxSge (16 B each) ]
 *   tail:    [ struct ibv_send_wr *bad_wr ]
 * </pre>
 */
final class SendRequestBlock implements AutoCloseable {
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

  private final int slots;
  private final int maxSge;
  private final long base;
  private final long sges;
  private final long badWr;
  private final int[] bindRkeys;
  private final IbvMemoryWindow[] bindWindows;

  SendRequestBlock(int slots, int maxSge) {
    this.slots = slots;
    this.maxSge = maxSge;
    long wrBytes = (long) slots * Structs.SendWr.SIZE;
    long sgeBytes = (long) slots * maxSge * Structs.Sge.SIZE;
    this.base = Native.allocate(wrBytes + sgeBytes + 8);
    this.sges = base + wrBytes;
    this.badWr = sges + sgeBytes;
    this.bindRkeys = new int[slots];
    this.bindWindows = new IbvMemoryWindow[slots];
    for (int i = 0; i < slots; i++) {
      Native.putLong(wr(i) + Structs.SendWr.SG_LIST, sge(i, 0));
    }
  }

  int slots() {
    return slots;
  }

  long wr(int slot) {
    return base + (long) slot * Structs.SendWr.SIZE;
  }

  long badWrPointer() {
    return badWr;
  }

  private long sge(int slot, int index) {
    return sges + ((long) slot * maxSge + index) * Structs.Sge.SIZE;
  }

  /** After a successful post of slots {@code [0, count)}: each bound window takes its new rkey. */
  void bindsPosted(int count) {
    for (int i = 0; i < count; i++) {
      IbvMemoryWindow mw = bindWindows[i];
      if (mw != null) {
        mw.bindPosted(bindRkeys[i]);
        bindWindows[i] = null;
      }
    }
  }

  /**
   * Encodes {@code request} into {@code slot}, linking it to the next slot when {@code last} is
   * false. Validates what libibverbs would reject without a completion.
   */
  void encode(int slot, SendWorkRequest request, boolean last, IbvProtectionDomain pd) {
    long wr = wr(slot);
    WrOpcode opcode = request.opcode();
    Native.putLong(wr + Structs.SendWr.WR_ID, request.wrId());
    Native.putLong(wr + Structs.SendWr.NEXT, last ? 0 : wr(slot + 1));
    Native.putInt(wr + Structs.SendWr.OPCODE, opcode.code());
    Native.putInt(wr + Structs.SendWr.SEND_FLAGS, request.flags() & 0x3);
    // imm_data shares its union with invalidate_rkey: a stale value fails a later BIND_MW (EINVAL)
    Native.putInt(wr + Structs.SendWr.IMM_DATA, 0);
    bindWindows[slot] = null;
    switch (opcode) {
      case RDMA_WRITE, RDMA_READ -> {
        encodeSges(slot, wr, request.sgl());
        Native.putLong(wr + Structs.SendWr.RDMA_REMOTE_ADDR, request.remoteAddress());
        Native.putInt(wr + Structs.SendWr.RDMA_RKEY, request.rkey());
      }
      case RDMA_WRITE_WITH_IMM -> {
        encodeSges(slot, wr, request.sgl());
        Native.putLong(wr + Structs.SendWr.RDMA_REMOTE_ADDR, request.remoteAddress());
        Native.putInt(wr + Structs.SendWr.RDMA_RKEY, request.rkey());
        Native.putInt(wr + Structs.SendWr.IMM_DATA, networkOrder(request.immData()));
      }
      case SEND -> encodeSges(slot, wr, request.sgl());
      case SEND_WITH_IMM -> {
        encodeSges(slot, wr, request.sgl());
        Native.putInt(wr + Structs.SendWr.IMM_DATA, networkOrder(request.immData()));
      }
      case LOCAL_INV -> {
        Native.putInt(wr + Structs.SendWr.NUM_SGE, 0);
        Native.putInt(wr + Structs.SendWr.INVALIDATE_RKEY, request.invalidateRkey());
      }
      case BIND_MW -> encodeBind(slot, wr, request, pd);
    }
  }

  private void encodeSges(int slot, long wr, ScatterGatherList sgl) {
    int count = sgl.count();
    if (count > maxSge) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          count + " SGEs but the queue pair was created for " + maxSge);
    }
    for (int i = 0; i < count; i++) {
      long sge = sge(slot, i);
      Native.putLong(sge + Structs.Sge.ADDR, sgl.address(i));
      Native.putInt(sge + Structs.Sge.LENGTH, sgl.length(i));
      Native.putInt(sge + Structs.Sge.LKEY, sgl.lkey(i));
    }
    Native.putInt(wr + Structs.SendWr.NUM_SGE, count);
  }

  private void encodeBind(int slot, long wr, SendWorkRequest request, IbvProtectionDomain pd) {
    MemoryWindow window = request.window();
    MemoryRegion region = request.bindRegion();
    if (!(window instanceof IbvMemoryWindow mw) || !(region instanceof IbvMemoryRegion mr)) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          "BIND_MW needs an ibv memory window and an ibv memory region");
    }
    if (mw.ibvPd() != pd) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_send",
          "the window belongs to another protection domain than the queue pair");
    }
    int rkey = mw.nextRkey();
    bindRkeys[slot] = rkey;
    bindWindows[slot] = mw;
    Native.putInt(wr + Structs.SendWr.NUM_SGE, 0);
    Native.putLong(wr + Structs.SendWr.BIND_MW, mw.handle());
    Native.putInt(wr + Structs.SendWr.BIND_RKEY, rkey);
    Native.putLong(wr + Structs.SendWr.BIND_MR, mr.handle());
    Native.putLong(wr + Structs.SendWr.BIND_ADDR, request.bindAddress());
    Native.putLong(wr + Structs.SendWr.BIND_LENGTH, request.bindLength());
    Native.putInt(wr + Structs.SendWr.BIND_ACCESS, request.bindAccess());
  }

  private static int networkOrder(int value) {
    return LITTLE_ENDIAN ? Integer.reverseBytes(value) : value;
  }

  @Override
  public void close() {
    Native.free(base);
  }
}
