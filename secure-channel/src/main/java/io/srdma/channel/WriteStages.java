package io.srdma.channel;

import io.srdma.channel.record.RecordSealer;
import io.srdma.channel.record.SealingKeys;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The convenience writes on top of {@link SealedWriter}: {@link RemoteGrant#write} of any length,
 * split into records laid end to end, waiting (bounded by the request timeout) for staging slots,
 * and a {@link CompletionStage} per write. Allocates per call (the stage, slices, and for large
 * writes the tasks that seal records in parallel on {@code sealingThreads}); the non-allocating
 * path is {@link RemoteGrant#tryWrite}. Thread-safe.
 */
final class WriteStages {
  private final SealedWriter writer;
  private final SessionState state;
  private final ExecutorService pool;
  private final int helpers;
  private final ThreadLocal<RecordSealer> sealers;
  private final Duration timeout;

  WriteStages(
      SealedWriter writer,
      SessionState state,
      SealingKeys keys,
      ExecutorService pool,
      int helpers,
      Duration timeout) {
    this.writer = writer;
    this.state = state;
    this.pool = pool;
    this.helpers = pool == null ? 0 : helpers;
    this.timeout = timeout;
    int max = writer.maxPayload();
    this.sealers = ThreadLocal.withInitial(() -> new RecordSealer(keys, max));
  }

  CompletionStage<Void> write(RemoteGrant g, long rel, ByteBuffer data) {
    // Position and length are read once: the span checked below is the span sealed, whatever
    // another thread does to the buffer meanwhile (a record grown past the check would reach past
    // the grant, and the target's refusal would put the queue pair, and so the session, in ERROR).
    int start = data.position();
    int payload = data.limit() - start;
    if (payload < 1) {
      return RemoteGrant.failed(ChannelException.Reason.INVALID_ARGUMENT, "nothing to write");
    }
    GrantTarget t = g.target();
    int max = writer.maxPayload();
    int records = SealedLayout.records(payload, max);
    long stride = roundUp(max + SealedLayout.RECORD_OVERHEAD, t.unit());
    long span =
        (records - 1) * stride
            + (payload - (long) (records - 1) * max)
            + SealedLayout.RECORD_OVERHEAD;
    CompletableFuture<Void> refused = g.check(Access.WRITE, rel, span);
    if (refused != null) {
      return refused;
    }
    if (rel % t.unit() != 0) {
      return RemoteGrant.failed(
          ChannelException.Reason.OUT_OF_BOUNDS,
          "offset " + rel + " is not a multiple of the grant's write unit " + t.unit());
    }
    ChannelException gone = state.unusable();
    if (gone != null) {
      return CompletableFuture.failedFuture(gone);
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    int batch = Math.max(1, Math.min(records, Math.min(writer.maxList(), writer.window() / 2)));
    long deadline = System.nanoTime() + timeout.toNanos();
    for (int first = 0; first < records; first += batch) {
      int count = Math.min(batch, records - first);
      if (!awaitRoom(count, deadline)) {
        done.completeExceptionally(
            new ChannelException(
                ChannelException.Reason.RESOURCE_EXHAUSTED,
                state.isOpen()
                    ? "no room for "
                        + count
                        + " record(s) within "
                        + timeout
                        + ": every staging slot in flight, or the host's receives not yet"
                        + " credited (its listener behind)"
                    : "session is over while waiting for room to write"));
        return done;
      }
      try {
        ChannelException closedMeanwhile = state.unusable(); // under the lock: see closeBarrier
        if (closedMeanwhile != null) {
          done.completeExceptionally(closedMeanwhile);
          return done;
        }
        long ended = g.endedCode(); // revoked while waiting for the lock: see SealedWriter
        if (ended != 0) {
          done.completeExceptionally(
              new ChannelException(
                  WriteResult.reason(ended), "grant " + g.id() + " ended: " + g.endedBecause()));
          return done;
        }
        seal(t, rel, data, start, payload, first, count, stride, max);
        long bytes = Math.min((long) count * max, payload - (long) first * max);
        long r = writer.post(count, bytes, first + count == records ? done : null);
        if (r < 0) {
          ChannelException why = state.unusable();
          done.completeExceptionally(
              why != null
                  ? why
                  : new ChannelException(ChannelException.Reason.TRANSPORT_FAILED, "post failed"));
          return done;
        }
      } catch (ChannelException e) {
        done.completeExceptionally(e);
        return done;
      } finally {
        writer.unlock();
      }
    }
    return done;
  }

  /**
   * Takes the writer's lock once {@code count} slots are free; false (unlocked) at the deadline.
   */
  private boolean awaitRoom(int count, long deadline) {
    for (int idle = 0; ; idle++) {
      writer.lock();
      if (writer.hasRoom(count)) {
        return true;
      }
      writer.unlock();
      if (!state.isOpen() || System.nanoTime() - deadline > 0) {
        return false;
      }
      if (idle < 20) {
        Thread.onSpinWait();
      } else if (idle < 40) {
        Thread.yield();
      } else {
        LockSupport.parkNanos(Math.min(1_000_000L, 10_000L << Math.min(6, idle - 40)));
      }
    }
  }

  /**
   * Seals records {@code first..first+count} of the {@code payload} bytes of {@code data} from
   * {@code start} (as checked at the call) into the next slots; the caller holds the lock.
   *
   * @throws ChannelException {@code INVALID_ARGUMENT} when another thread lowered the buffer's
   *     limit below those bytes meanwhile (nothing of this batch posted)
   */
  private void seal(
      GrantTarget t,
      long rel,
      ByteBuffer data,
      int start,
      int payload,
      int first,
      int count,
      long stride,
      int max) {
    long base = writer.nextSequence(0);
    AtomicInteger next = new AtomicInteger();
    Runnable share =
        () -> {
          for (int k; (k = next.getAndIncrement()) < count; ) {
            int index = first + k;
            int n = Math.min(max, payload - index * max);
            long at = rel + index * stride;
            int slot = (int) ((base + k) % writer.slots());
            int length;
            try {
              length =
                  sealers
                      .get()
                      .seal(
                          data,
                          start + index * max,
                          n,
                          t.binding(),
                          t.offset() + at,
                          writer.stagingBuffer(),
                          slot * writer.slotSize());
            } catch (IndexOutOfBoundsException e) {
              throw new ChannelException(
                  ChannelException.Reason.INVALID_ARGUMENT,
                  "the buffer's limit was lowered to "
                      + data.limit()
                      + " during the write of "
                      + payload
                      + " bytes from "
                      + start);
            }
            if (length < 0) {
              throw new ChannelException(
                  ChannelException.Reason.RESOURCE_EXHAUSTED, "sealing refused: " + length);
            }
            writer.prepare(t, at, slot, length, base + k);
          }
        };
    int extra = Math.min(count - 1, helpers);
    if (extra <= 0) {
      share.run();
      return;
    }
    CompletableFuture<?>[] parallel = new CompletableFuture<?>[extra];
    for (int i = 0; i < extra; i++) {
      parallel[i] = CompletableFuture.runAsync(share, pool);
    }
    RuntimeException failed = null;
    try {
      share.run();
    } catch (RuntimeException e) {
      failed = e;
    }
    try {
      CompletableFuture.allOf(parallel).join(); // no helper still writes a slot after this
    } catch (CompletionException e) {
      RuntimeException helper = e.getCause() instanceof ChannelException c ? c : e;
      if (failed == null) {
        failed = helper;
      } else {
        failed.addSuppressed(helper);
      }
    }
    if (failed != null) {
      throw failed;
    }
  }

  private static long roundUp(long value, long unit) {
    return (value + unit - 1) / unit * unit;
  }
}
