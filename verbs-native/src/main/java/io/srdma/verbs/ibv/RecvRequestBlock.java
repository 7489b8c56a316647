package io.srdma.verbs.ibv;

import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.VerbsException;

/** One off-heap {@code ibv_recv_wr} with its SGE array, encoded in place for each post. */
final class RecvRequestBlock implements AutoCloseable {
  private final String verb;
  private final int maxSge;
  private final long wr;
  private final long sges;
  private final long badWr;

  RecvRequestBlock(int maxSge, String verb) {
    this.verb = verb;
    this.maxSge = Math.max(1, maxSge);
    long sgeBytes = (long) this.maxSge * Structs.Sge.SIZE;
    this.wr = Native.allocate(Structs.RecvWr.SIZE + sgeBytes + 8);
    this.sges = wr + Structs.RecvWr.SIZE;
    this.badWr = sges + sgeBytes;
    Native.putLong(wr + Structs.RecvWr.SG_LIST, sges);
  }

  long wr() {
    return wr;
  }

  long badWrPointer() {
    return badWr;
  }

  void encode(ReceiveWorkRequest request) {
    ScatterGatherList sgl = request.sgl();
    int count = sgl.count();
    if (count > maxSge) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          count + " SGEs but the queue was created for " + maxSge);
    }
    Native.putLong(wr + Structs.RecvWr.WR_ID, request.wrId());
    Native.putLong(wr + Structs.RecvWr.NEXT, 0);
    for (int i = 0; i < count; i++) {
      long sge = sges + (long) i * Structs.Sge.SIZE;
      Native.putLong(sge + Structs.Sge.ADDR, sgl.address(i));
      Native.putInt(sge + Structs.Sge.LENGTH, sgl.length(i));
      Native.putInt(sge + Structs.Sge.LKEY, sgl.lkey(i));
    }
    Native.putInt(wr + Structs.RecvWr.NUM_SGE, count);
  }

  @Override
  public void close() {
    Native.free(wr);
  }
}
