package io.srdma.channel;

import java.nio.ByteBuffer;

/**
 * The records of one {@link WriteBatch}: pieces whose remote ranges follow each other form a run,
 * and each run is sealed as one record. {@link #find} checks every piece and every run before
 * anything is sealed (all or nothing); {@link #sealEach} then seals the runs into the writer's next
 * staging slots. A run whose pieces also follow each other in one buffer (a single piece, say) is
 * sealed straight from it; any other is gathered into a scratch array first (a {@code
 * Cipher.update} per piece instead measured slower with both providers, and it allocates:
 * SealPathBenchmark).
 *
 * <p>Not thread-safe: one per {@link SealedWriter}, used under its lock. Allocates nothing after
 * construction.
 */
final class BatchRuns {
  private final long[] first; // relative offset of each run
  private final long[] recordEnd; // relative offset just past each run's record
  private final int[] end; // index after each run's last piece
  private final byte[] scratch;
  private final ByteBuffer scratchBuffer;
  private final int maxPayload;
  private int runs;
  private long bytes;

  BatchRuns(int maxPieces, int maxPayload) {
    this.first = new long[maxPieces];
    this.recordEnd = new long[maxPieces];
    this.end = new int[maxPieces];
    this.scratch = new byte[maxPayload];
    this.scratchBuffer = ByteBuffer.wrap(scratch);
    this.maxPayload = maxPayload;
  }

  /** Most pieces a batch may have. */
  int capacity() {
    return first.length;
  }

  /** Records (runs) the last {@link #find} found. */
  int count() {
    return runs;
  }

  /** Plaintext bytes of the last {@link #find}'s pieces. */
  long bytes() {
    return bytes;
  }

  /**
   * Checks the batch (1 to {@link #capacity} pieces), every piece (a buffer, a length of at least
   * 1, a range within the buffer's limit) and every run (at most one record's payload, allowed by
   * the grant, its record overlapping no other run's record of the batch: the later one would
   * overwrite the earlier, which the host would then reject, half the batch applied) and remembers
   * the runs.
   *
   * @return 0, or the {@link WriteResult} that refuses the whole batch
   */
  long find(WriteBatch batch, RemoteGrant g, SealedWriter writer) {
    runs = 0;
    bytes = 0;
    int pieces = batch.size(); // read once: a batch changed meanwhile cannot overrun the runs
    if (pieces < 1 || pieces > first.length) {
      return WriteResult.INVALID_ARGUMENT;
    }
    long runBytes = 0;
    long now = System.currentTimeMillis(); // every run is checked at one instant
    for (int i = 0; i < pieces; i++) {
      int len = batch.length(i);
      ByteBuffer b = batch.buffer(i);
      if (b == null || len < 1 || batch.from(i) < 0 || batch.from(i) > b.limit() - len) {
        return WriteResult.INVALID_ARGUMENT;
      }
      long rel = batch.relativeOffset(i);
      boolean contiguous = i > 0 && rel == batch.relativeOffset(i - 1) + batch.length(i - 1);
      if (contiguous) {
        runBytes += len;
      } else {
        if (i > 0) {
          long refused = closeRun(g, writer, runBytes, now);
          if (refused != 0) {
            return refused;
          }
        }
        first[runs++] = rel;
        runBytes = len;
      }
      end[runs - 1] = i + 1;
      bytes += len;
    }
    long refused = closeRun(g, writer, runBytes, now);
    if (refused != 0) {
      return refused;
    }
    if (runs > writer.maxList()) {
      return WriteResult.INVALID_ARGUMENT; // more records than one post list (before the O(n^2))
    }
    return overlapping() ? WriteResult.INVALID_ARGUMENT : 0;
  }

  /** Checks the last run found ({@code runBytes} long) and remembers where its record ends. */
  private long closeRun(RemoteGrant g, SealedWriter writer, long runBytes, long nowMillis) {
    long rel = first[runs - 1];
    long refused = checkRun(g, writer, rel, runBytes, nowMillis);
    if (refused == 0) {
      recordEnd[runs - 1] = rel + runBytes + SealedLayout.RECORD_OVERHEAD; // in the grant: no wrap
    }
    return refused;
  }

  /**
   * Whether two runs' records overlap: in one pass when each run starts at or after the end of the
   * record before it (the usual order) but at most once, where a ring wraps, and the part after the
   * wrap ends before the part before it starts (each part in order: nothing overlaps); else by
   * comparing every pair (at most a post list's records). The one pass costs the bench's ring of 64
   * B records nothing; the pairs were a seventh of its writer's time wherever a post list wrapped
   * (profile, docs/performance.md session 34).
   */
  private boolean overlapping() {
    int wrap = 0; // the run where the order restarts lower, if one does
    for (int r = 1; r < runs; r++) {
      if (first[r] < recordEnd[r - 1]) {
        if (wrap != 0) {
          return overlappingPairs(); // out of order more than once
        }
        wrap = r;
      }
    }
    return wrap != 0 && recordEnd[runs - 1] > first[0] && overlappingPairs();
  }

  /** Whether any two runs' records overlap, pair by pair. */
  private boolean overlappingPairs() {
    for (int r = 1; r < runs; r++) {
      for (int q = 0; q < r; q++) {
        if (first[r] < recordEnd[q] && first[q] < recordEnd[r]) {
          return true;
        }
      }
    }
    return false;
  }

  private long checkRun(
      RemoteGrant g, SealedWriter writer, long rel, long runBytes, long nowMillis) {
    if (runBytes > maxPayload) {
      return WriteResult.INVALID_ARGUMENT;
    }
    return writer.check(g, rel, runBytes + SealedLayout.RECORD_OVERHEAD, nowMillis);
  }

  /**
   * Seals the runs {@link #find} found into the writer's next {@link #count} slots; the caller
   * holds the writer's lock and checked there is room.
   *
   * @return 0, or the negative {@link WriteResult} of the first run the sealer refused (nothing is
   *     posted then)
   */
  long sealEach(WriteBatch batch, GrantTarget t, SealedWriter writer) {
    int piece = 0;
    for (int r = 0; r < runs; r++) {
      long sealed;
      int adjacent = adjacentInOneBuffer(batch, piece, end[r]);
      if (adjacent > 0) {
        sealed = writer.seal(t, first[r], batch.buffer(piece), batch.from(piece), adjacent, r);
        piece = end[r];
      } else {
        int at = 0;
        for (; piece < end[r]; piece++) {
          int len = batch.length(piece);
          batch.buffer(piece).get(batch.from(piece), scratch, at, len);
          at += len;
        }
        scratchBuffer.limit(at).position(0);
        sealed = writer.seal(t, first[r], scratchBuffer, r);
      }
      if (sealed < 0) {
        return sealed;
      }
    }
    return 0;
  }

  /**
   * The bytes of pieces {@code from} to {@code to - 1} when each starts in the same buffer where
   * the one before it ended (so the run is one range of that buffer), else 0.
   */
  private static int adjacentInOneBuffer(WriteBatch batch, int from, int to) {
    ByteBuffer b = batch.buffer(from);
    int next = batch.from(from);
    for (int p = from; p < to; p++) {
      if (batch.buffer(p) != b || batch.from(p) != next) {
        return 0;
      }
      next += batch.length(p);
    }
    return next - batch.from(from);
  }
}
