package io.srdma.channel;

import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.RecordSealer;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client's sealed reader: RDMA READ of a grant's range into the registered read buffer, then
 * the owner-sealed records in it opened with the grant's region keys; retries a read that raced a
 * region key rotation. Also posts the raw operations of {@link AttackProbe}. One read at a time
 * holds the read buffer (a lock, waited for at most the request timeout). Thread-safe.
 */
final class SealedReader {
  /** Work request ids of reads and raw posts (writes use record sequences below 2^40). */
  static final long READ_WR = 1L << 40;

  static final long RAW_WR = 1L << 41;

  /** Reads of one call: the first, and retries after a rotation raced it. */
  private static final int READ_ATTEMPTS = 3;

  private final SessionState state;
  private final QueuePair qp;
  private final MemoryRegion readBuffer;
  private final int maxReadBytes;
  private final Duration requestTimeout;
  private final ReentrantLock readLock = new ReentrantLock();
  private final SendWorkRequest readRequest = new SendWorkRequest(1);
  private volatile CompletableFuture<WcStatus> readDone;

  SealedReader(
      SessionState state,
      QueuePair qp,
      MemoryRegion readBuffer,
      int maxReadBytes,
      Duration requestTimeout) {
    this.state = state;
    this.qp = qp;
    this.readBuffer = readBuffer;
    this.maxReadBytes = maxReadBytes;
    this.requestTimeout = requestTimeout;
  }

  /** The polling thread: the outstanding read or raw post completed. */
  void onCompletion(WcStatus status) {
    CompletableFuture<WcStatus> r = readDone;
    if (r != null) {
      r.complete(status);
    }
  }

  /** Fails the outstanding read (close, session lost). */
  void failWaiting(ChannelException cause) {
    CompletableFuture<WcStatus> r = readDone;
    if (r != null) {
      r.completeExceptionally(cause);
    }
  }

  CompletionStage<ByteBuffer> read(RemoteGrant g, long relativeOffset, int sealedLength) {
    CompletableFuture<Void> refused = g.check(Access.READ, relativeOffset, sealedLength);
    if (refused != null) {
      return refused.thenApply(v -> null);
    }
    if (sealedLength < SealedLayout.OWNER_RECORD_OVERHEAD + 1 || sealedLength > maxReadBytes) {
      return RemoteGrant.failed(
          ChannelException.Reason.INVALID_ARGUMENT,
          "read length must be "
              + (SealedLayout.OWNER_RECORD_OVERHEAD + 1)
              + ".."
              + maxReadBytes
              + ", got "
              + sealedLength);
    }
    if (g.readOpener == null) {
      return RemoteGrant.failed(
          ChannelException.Reason.NOT_PERMITTED, "grant " + g.id() + " carries no region key");
    }
    // A read racing a rotation may see records of a generation whose key is still on its way
    // (REGION_KEY), or a record the owner is re-sealing in place: wait for the key, read again.
    for (int attempt = 1; ; attempt++) {
      ChannelException gone = state.unusable();
      if (gone != null) {
        return CompletableFuture.failedFuture(gone);
      }
      int generation = g.regionKeyGeneration();
      ReadAttempt a = readOnce(g, relativeOffset, sealedLength);
      if (a.failure != null) {
        return CompletableFuture.failedFuture(a.failure);
      }
      if (a.result == null) { // cut short (the host writes the record after before saying so)
        if (attempt < READ_ATTEMPTS) {
          continue;
        }
        return recordsStopped(
            g,
            a.at,
            relativeOffset,
            "zero where the owner record before them says another follows: the records were cut"
                + " short (wiped), not ended");
      }
      if (a.result == OpenResult.OK) {
        return CompletableFuture.completedFuture(a.plaintext);
      }
      boolean newer = a.result == OpenResult.UNKNOWN_EPOCH && a.generation > generation;
      // after the first record, bytes that are not a header may be a record the owner is sealing
      // there right now (its body visible before its header): read again before refusing them
      boolean later =
          a.at > relativeOffset
              && (a.result == OpenResult.MALFORMED || a.result == OpenResult.TRUNCATED);
      boolean torn =
          a.result == OpenResult.AUTH_FAILED || a.result == OpenResult.BAD_SIGNATURE || later;
      if (attempt < READ_ATTEMPTS && (newer || torn)) {
        if (newer) {
          try {
            g.regionKeys.awaitNewerThan(
                generation, Duration.ofMillis(Math.min(2000, requestTimeout.toMillis())));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return RemoteGrant.failed(ChannelException.Reason.TIMEOUT, "interrupted");
          }
        }
        continue;
      }
      if (later) {
        return recordsStopped(
            g,
            a.at,
            relativeOffset,
            "neither a record nor never-written zero bytes: "
                + a.result
                + " (the records end there; tampered, or left over from a longer one)");
      }
      return RemoteGrant.failed(
          ChannelException.Reason.RECORD_REJECTED,
          "record at offset " + a.at + " of grant " + g.id() + ": " + a.result);
    }
  }

  /**
   * The records of a read stopped at {@code at} (relative to the grant) before the read's end: a
   * refusal naming the offset, how far into the read it is, and {@code why} the bytes there end
   * nothing.
   */
  private static <T> CompletableFuture<T> recordsStopped(
      RemoteGrant g, long at, long readFrom, String why) {
    return RemoteGrant.failed(
        ChannelException.Reason.RECORD_REJECTED,
        "bytes at offset "
            + at
            + " of grant "
            + g.id()
            + " ("
            + (at - readFrom)
            + " bytes into the read) are "
            + why);
  }

  /**
   * Whether {@code b} holds only zero bytes from {@code from} to {@code to}: memory never written,
   * the one clean end of the records in a read.
   */
  static boolean zeroFrom(ByteBuffer b, int from, int to) {
    int i = from;
    for (; to - i >= Long.BYTES; i += Long.BYTES) {
      if (b.getLong(i) != 0) {
        return false;
      }
    }
    for (; i < to; i++) {
      if (b.get(i) != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * The outcome of one RDMA READ and the opening of its records: a failure, or the result of the
   * record at {@code at} ({@code OK}: all of them, {@code plaintext}), or no result: cut short.
   */
  private record ReadAttempt(
      ChannelException failure, OpenResult result, long at, int generation, ByteBuffer plaintext) {
    static ReadAttempt failed(ChannelException e) {
      return new ReadAttempt(e, null, 0, 0, null);
    }

    /** Zero bytes at {@code at}, where the record before says another follows. */
    static ReadAttempt cutShort(long at) {
      return new ReadAttempt(null, null, at, 0, null);
    }
  }

  /**
   * One RDMA READ of the range and the opening of the owner records in it, holding the read buffer
   * throughout so no other read overwrites it before it is opened.
   */
  private ReadAttempt readOnce(RemoteGrant g, long relativeOffset, int sealedLength) {
    boolean locked = false;
    try {
      locked = readLock.tryLock(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
      if (!locked) {
        return ReadAttempt.failed(
            new ChannelException(
                ChannelException.Reason.TIMEOUT, "another read held the read buffer too long"));
      }
      ChannelException gone = state.unusable(); // again with the buffer: close may have come
      if (gone != null) {
        return ReadAttempt.failed(gone);
      }
      GrantTarget t = g.target();
      WcStatus status =
          rawPost(
              WrOpcode.RDMA_READ,
              t.remoteAddress() + relativeOffset,
              t.rkey(),
              null,
              sealedLength,
              0,
              READ_WR);
      if (status != WcStatus.SUCCESS && (state.isClosed() || state.lost() != null)) {
        return ReadAttempt.failed(state.unusable()); // ended meanwhile: say so, not what it did
      }
      if (status == null) {
        return ReadAttempt.failed(
            new ChannelException(
                ChannelException.Reason.TIMEOUT,
                "RDMA READ of grant " + g.id() + " got no completion in time"));
      }
      if (status != WcStatus.SUCCESS) {
        return ReadAttempt.failed(
            DataPathFailure.of("RDMA READ of grant " + g.id(), status, state.dataPathFailure()));
      }
      ByteBuffer out = ByteBuffer.allocate(sealedLength);
      synchronized (g.readOpener) {
        ByteBuffer in = readBuffer.buffer();
        int pos = 0;
        // The first record must open; after it, the records end only where the rest of the range
        // is zero (never written). Anything else (a header flipped or zeroed before later records,
        // the tail of a longer record a shorter one overwrote, a cut-off record) fails the read,
        // so a range cut short never reads as the whole of it.
        // And never after a record that says another follows it (signed): there, zero bytes are
        // records wiped, not their end.
        boolean followed = false;
        while (pos < sealedLength && (pos == 0 || followed || !zeroFrom(in, pos, sealedLength))) {
          if (followed
              && zeroFrom(in, pos, Math.min(sealedLength, pos + RecordSealer.HEADER_LENGTH))) {
            return ReadAttempt.cutShort(relativeOffset + pos);
          }
          OpenResult r =
              g.readOpener.open(
                  in, pos, sealedLength - pos, g.offset() + relativeOffset + pos, out);
          if (r != OpenResult.OK) {
            return new ReadAttempt(
                null, r, relativeOffset + pos, g.readOpener.lastGeneration(), null);
          }
          pos += g.readOpener.lastRecordLength();
          followed = g.readOpener.lastFollowed();
        }
      }
      out.flip();
      return new ReadAttempt(null, OpenResult.OK, relativeOffset, 0, out);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return ReadAttempt.failed(
          new ChannelException(ChannelException.Reason.TIMEOUT, "interrupted"));
    } finally {
      if (locked) {
        readLock.unlock();
      }
    }
  }

  /**
   * Posts one raw WRITE_WITH_IMM, WRITE or READ through the read buffer, without the writer's
   * checks, and waits for its completion: for tests that prove the target refuses what the writer
   * would not send. Null when no completion came in time.
   */
  WcStatus rawPost(
      WrOpcode op, long remoteAddress, int rkey, byte[] bytes, int length, int imm, long tag) {
    boolean locked = false;
    try {
      locked = readLock.tryLock(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
      if (!locked) {
        return null;
      }
      if (bytes != null) {
        readBuffer.buffer().put(0, bytes);
      }
      CompletableFuture<WcStatus> done = new CompletableFuture<>();
      readDone = done;
      if (state.isClosed()) {
        // close() marks the session closed, then fails readDone: this post either sees it closed
        // here, or close sees readDone and fails it; never a post that waits for a completion
        // that cannot come (the queue pair destroyed, the lane left) until the request timeout
        return null;
      }
      readRequest
          .wrId(tag | RAW_WR)
          .opcode(op)
          .remote(remoteAddress, rkey)
          .immData(imm)
          .signaled(true);
      readRequest.sgl().set(readBuffer, 0, length);
      qp.postSend(readRequest);
      return done.get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return null;
    } catch (ExecutionException e) {
      return WcStatus.WR_FLUSH_ERR;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (VerbsException e) {
      return WcStatus.WR_FLUSH_ERR;
    } finally {
      readDone = null;
      if (locked) {
        readLock.unlock();
      }
    }
  }
}
