package io.srdma.channel;

import io.srdma.channel.protocol.Capabilities;
import io.srdma.channel.record.RecordSealer;
import io.srdma.channel.record.SealingKeys;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client's sealed writer: seals records on the calling thread into registered staging slots (a
 * ring, freed in posting order as completions arrive) and posts them as WRITE_WITH_IMM with one
 * post list per call. Nothing is allocated and nothing handed to another thread per write.
 *
 * <p>Selective signaling: a signaled completion of an RC queue pair implies every earlier one, so
 * only some writes ask for one (on soft, each costs an ACK frame, a read and a wake-up at both
 * ends): a post is signaled when a stage waits for it, when no signaled write is outstanding, or
 * when {@link #signalEvery} records went unsignaled. A burst's last writes are covered by a
 * <em>fence</em>: when the last signaled write completes and unsignaled ones were posted after it,
 * the polling thread posts one signaled zero-length RDMA WRITE (InfiniBand C9-88: it checks no
 * R_Key, touches no memory and consumes no receive at the host), so every posted record completes
 * within one more round trip and {@link #completedPosition} always reaches {@link #postedPosition}.
 *
 * <p>Record runs ({@code RECORD_RUNS}, docs/protocol.md): where the host takes them, the records of
 * one post list that land end to end in one grant go as one WRITE_WITH_IMM gathering their slots
 * (at most {@link #runRecords} records and {@link #RUN_BYTES} bytes): one request, one receive and
 * one notification at the host for the run instead of one each; every record is still sealed for
 * its own offset and opened on its own. Latency is untouched: only records posted together merge.
 *
 * <p>Room: a record holds a staging slot until it completes, and a receive of the host's until the
 * host opened it and reposted the receive (a run holds one receive; room is counted in records,
 * which is never less). Where the host returns receive credits ({@link CreditWord}) no more records
 * are posted beyond its credit than its receive depth; where it does not, no more are in flight
 * than that depth. Past it a write would wait for a receive (on an RNIC for the RNR NAK timer, and
 * the session lost after the budget): {@code BACK_PRESSURED} instead.
 *
 * <p>Thread-safe: writes of several threads are serialized by one lock held while sealing and
 * posting (released through {@link #unlock}, which runs a fence the polling thread could not);
 * {@link #onCompletion} is called by one polling thread at a time.
 */
final class SealedWriter {
  private final SessionState state;
  private final QueuePair qp;
  private final MemoryRegion staging;
  private final ByteBuffer stagingBuffer;
  private final int slots;
  private final int window; // records in flight at most: slots (no credits: or host receives)
  private final CreditWord credits; // null: the host returns no credits
  private final int receives; // with credits: records posted beyond the host's credit at most
  private final int maxList; // records in one post list at most
  private final int slotSize;
  private final int maxPayload;
  private final RecordSealer sealer;
  private final SendWorkRequest[] requests;
  private final SendWorkRequest[] postList;
  private final BatchRuns runs; // guarded by lock
  private final ReentrantLock lock = new ReentrantLock();
  private final AtomicReferenceArray<CompletableFuture<Void>> waiters;
  private final KeyEpochs epochs;
  private final SendWorkRequest fence;
  private final int signalEvery;
  private final int runRecords; // records one WRITE may carry (1: no runs)
  private long posted; // records posted; guarded by lock
  private long postedWrites; // WRITE_WITH_IMMs posted (a run is one); guarded by lock
  private volatile long lastSignaled = -1; // sequence of the last signaled write; under lock
  private volatile boolean fenceWanted; // the last signaled write completed; see tryFence
  private long fences; // fences posted; guarded by lock
  private volatile long completed; // records completed; written by the polling thread
  private volatile long failedAt = Long.MAX_VALUE; // sequence of the first failed record
  private volatile WriteCompletionHandler handler;

  /** Most bytes of records one WRITE of a run carries. */
  static final int RUN_BYTES = 64 * 1024;

  /**
   * A writer of {@code slots} staging slots to a host that keeps {@code hostReceives} receives
   * posted for the session (0: not said) and, where {@code credits} is not null, returns receive
   * credits into it; {@code runRecords} records at most go as one WRITE (1: each its own; more only
   * where the host chose {@code RECORD_RUNS}, and at most the queue pair's send SGEs).
   */
  SealedWriter(
      SessionState state,
      QueuePair qp,
      MemoryRegion staging,
      int slots,
      int hostReceives,
      CreditWord credits,
      int maxPayload,
      SealingKeys keys,
      KeyEpochs epochs,
      int maxBatch,
      int runRecords) {
    if (slots < 1 || hostReceives < 0 || (credits != null && hostReceives < 1) || runRecords < 1) {
      throw new IllegalArgumentException(
          slots
              + " slots, "
              + hostReceives
              + " host receives, credits "
              + (credits != null)
              + ", "
              + runRecords
              + " records a write");
    }
    this.credits = credits;
    this.receives = hostReceives;
    if (credits == null) {
      this.window = hostReceives > 0 ? Math.min(slots, hostReceives) : slots;
      this.maxList = window;
    } else {
      // The staging slots bound what is in flight, the host's receives what is posted beyond its
      // credit; a post list stays within receives - every + 1 (every = the reposts a credit waits
      // for), so a writer waiting for room always has a credit coming.
      this.window = slots;
      this.maxList = Math.min(slots, hostReceives - Capabilities.creditEvery(hostReceives) + 1);
    }
    this.state = state;
    this.qp = qp;
    this.staging = staging;
    this.stagingBuffer = staging.buffer();
    this.slots = slots;
    this.maxPayload = maxPayload;
    this.slotSize = maxPayload + SealedLayout.RECORD_OVERHEAD;
    this.sealer = new RecordSealer(keys, maxPayload);
    this.epochs = epochs;
    this.runRecords = runRecords;
    this.requests = new SendWorkRequest[slots];
    this.postList = new SendWorkRequest[slots];
    for (int i = 0; i < slots; i++) {
      requests[i] = new SendWorkRequest(runRecords).wrId(i).opcode(WrOpcode.RDMA_WRITE_WITH_IMM);
    }
    this.runs = new BatchRuns(maxBatch, maxPayload);
    this.waiters = new AtomicReferenceArray<>(slots);
    this.signalEvery = Math.max(1, window / 4);
    this.fence = new SendWorkRequest(1).opcode(WrOpcode.RDMA_WRITE).signaled(true).remote(0, 0);
    fence.sgl().clear();
  }

  /** Staging slots: the ring records are sealed into. */
  int slots() {
    return slots;
  }

  /**
   * Records that can be in flight (posted, not completed) at once: the staging slots; or, where the
   * host returns no credits, the receives it keeps posted for the session if fewer (each record
   * holds one until the host opened it; one past them would wait for a receive).
   */
  int window() {
    return window;
  }

  /**
   * Most records in one post list: the window, or with credits {@code receives - receives / 2 + 1}
   * (a list that needs more room than a credit frees could wait for ever).
   */
  int maxList() {
    return maxList;
  }

  int maxPayload() {
    return maxPayload;
  }

  /** Most records one WRITE carries: 1 unless the host takes record runs. */
  int runRecords() {
    return runRecords;
  }

  /** WRITE_WITH_IMMs posted so far: records, less those that went in a run after its first. */
  long postedWrites() {
    lock.lock();
    try {
      return postedWrites;
    } finally {
      unlock();
    }
  }

  /**
   * Records posted so far (the position of the last posted write). Takes the lock: a post is
   * counted once its postSend returned, so no completion is ever reported past this.
   */
  long postedPosition() {
    lock.lock();
    try {
      return posted;
    } finally {
      unlock();
    }
  }

  /** Zero-length fences posted so far (tests, metrics). */
  long fences() {
    lock.lock();
    try {
      return fences;
    } finally {
      unlock();
    }
  }

  /** Records completed so far, in posting order. */
  long completedPosition() {
    return completed;
  }

  void handler(WriteCompletionHandler h) {
    handler = h;
  }

  /**
   * Checks a grant for a write of {@code span} record bytes at {@code rel} at {@code nowMillis}
   * (the wall clock, read once per call of the SDK: a batch's pieces are checked at one instant,
   * and on a VM's kvm-clock a read costs ~30 ns); 0 when allowed.
   */
  long check(RemoteGrant g, long rel, long span, long nowMillis) {
    long ended = g.endedCode();
    if (ended != 0) {
      return ended;
    }
    GrantTarget t = g.target();
    if (nowMillis >= t.expiresAtMillis()) {
      return WriteResult.EXPIRED;
    }
    if (!t.allows(Access.WRITE)) {
      return WriteResult.NOT_PERMITTED;
    }
    if (!t.inBounds(rel, span) || rel % t.unit() != 0) {
      return WriteResult.OUT_OF_BOUNDS;
    }
    return state.writeRefusal();
  }

  /** One record of {@code length} bytes of {@code src} from index {@code from}; see RemoteGrant. */
  long tryWrite(RemoteGrant g, long rel, ByteBuffer src, int from, int length) {
    if (length < 1 || length > maxPayload || from < 0 || from > src.limit() - length) {
      return WriteResult.INVALID_ARGUMENT;
    }
    long refused =
        check(g, rel, (long) length + SealedLayout.RECORD_OVERHEAD, System.currentTimeMillis());
    if (refused != 0) {
      return refused;
    }
    lock.lock();
    try {
      // Again under the lock: a REVOKE the application heard of while this thread waited here
      // (the host invalidated the window; the write would put the queue pair, and so the session
      // and its other grants, into ERROR), and see closeBarrier. One volatile read each.
      long ended = g.endedCode();
      if (ended != 0) {
        return ended;
      }
      long gone = state.writeRefusal();
      if (gone != 0) {
        return gone;
      }
      if (!hasRoom(1)) {
        return WriteResult.BACK_PRESSURED;
      }
      // Sealed straight from src (heap: from its array; else copied once into the sealer's):
      // no copy into scratch first. GCM reads each plaintext byte once, so a caller writing into
      // src meanwhile changes what is sealed, never makes the tag disagree with the ciphertext.
      long sealedAt;
      try {
        sealedAt = seal(g.target(), rel, src, from, length, 0);
      } catch (IndexOutOfBoundsException e) {
        return WriteResult.INVALID_ARGUMENT; // another thread lowered src's limit since the check
      }
      if (sealedAt < 0) {
        return sealedAt;
      }
      return post(1, length, null);
    } finally {
      unlock();
    }
  }

  /** The pieces of a batch: contiguous runs as one record each, one post list; see WriteBatch. */
  long tryWriteBatch(RemoteGrant g, WriteBatch batch) {
    if (batch.size() < 1 || batch.size() > runs.capacity()) {
      return WriteResult.INVALID_ARGUMENT;
    }
    lock.lock();
    try {
      long gone = state.writeRefusal(); // again under the lock: see closeBarrier
      if (gone != 0) {
        return gone;
      }
      long refused = runs.find(batch, g, this); // every piece checked before anything is sealed
      if (refused != 0) {
        return refused;
      }
      int records = runs.count();
      if (records > maxList) {
        return WriteResult.INVALID_ARGUMENT;
      }
      if (!hasRoom(records)) {
        return WriteResult.BACK_PRESSURED;
      }
      long sealed;
      try {
        sealed = runs.sealEach(batch, g.target(), this);
      } catch (IndexOutOfBoundsException e) {
        return WriteResult.INVALID_ARGUMENT; // a piece's limit lowered since find: nothing posted
      }
      if (sealed < 0) {
        return sealed; // nothing posted: the slots claimed are not counted
      }
      return post(records, runs.bytes(), null);
    } finally {
      unlock();
    }
  }

  /**
   * Seals one record of {@code plain} (position to limit) for {@code rel} into the {@code k}-th
   * slot after the posted ones and prepares its work request; the caller holds the lock.
   *
   * @return 0, or a negative {@link WriteResult}
   */
  long seal(GrantTarget t, long rel, ByteBuffer plain, int k) {
    return seal(t, rel, plain, plain.position(), plain.remaining(), k);
  }

  /**
   * As {@link #seal(GrantTarget, long, ByteBuffer, int)}, of {@code length} bytes from {@code
   * from}.
   */
  long seal(GrantTarget t, long rel, ByteBuffer src, int from, int length, int k) {
    int slot = (int) ((posted + k) % slots);
    int sealed =
        sealer.seal(
            src, from, length, t.binding(), t.offset() + rel, stagingBuffer, slot * slotSize);
    if (sealed < 0) {
      return WriteResult.SEALING_REFUSED;
    }
    prepare(t, rel, slot, sealed, posted + k);
    return 0;
  }

  /** Prepares the work request of a sealed slot; the caller holds the lock. */
  void prepare(GrantTarget t, long rel, int slot, int length, long sequence) {
    SendWorkRequest wr = requests[slot];
    wr.wrId(sequence).remote(t.remoteAddress() + rel, t.rkey()).immData(t.immediate(rel));
    wr.sgl().set(staging, (long) slot * slotSize, length);
  }

  /** The staging buffer and the offset of the {@code k}-th slot after the posted ones. */
  ByteBuffer stagingBuffer() {
    return stagingBuffer;
  }

  int slotSize() {
    return slotSize;
  }

  long nextSequence(int k) {
    return posted + k;
  }

  /** Takes the writer's lock; release it with {@link #unlock}. */
  void lock() {
    lock.lock();
  }

  /**
   * Called by close after the session is marked closed and before its keys and staging memory are
   * freed: waits for a write inside the lock to finish; every later one sees the session closed
   * under the lock and returns SESSION_CLOSED without sealing (no use of closed keys or freed
   * memory, no exception out of tryWrite).
   */
  void closeBarrier() {
    lock.lock();
    lock.unlock();
  }

  /** Releases the writer's lock, then posts a fence the polling thread asked for meanwhile. */
  void unlock() {
    lock.unlock();
    if (fenceWanted) {
      tryFence();
    }
  }

  /**
   * Whether {@code records} more can be posted now: staging slots free, and with credits as many
   * receives at the host; the caller holds the lock.
   */
  boolean hasRoom(int records) {
    // credits count the host's reposts, one per WRITE (a run is one): compared with the writes
    // posted, with a write per record as the room asked for (never fewer writes than that)
    return posted - completed <= window - records
        && (credits == null || postedWrites - credits.credited(postedWrites) <= receives - records);
  }

  /**
   * Posts the {@code count} prepared slots after the posted ones as one post list; the caller holds
   * the lock. {@code waiter}, when not null, is completed with the last of them.
   *
   * @return the new position, or {@link WriteResult#DATA_PATH_FAILED} (nothing posted)
   */
  long post(int count, long bytes, CompletableFuture<Void> waiter) {
    int first = (int) (posted % slots);
    long lastSequence = posted + count - 1;
    boolean signal =
        waiter != null
            || completed > lastSignaled // nothing signaled is outstanding
            || lastSequence - lastSignaled >= signalEvery;
    int writes = 0;
    for (int i = 0; i < count; ) {
      SendWorkRequest wr = requests[(first + i) % slots];
      int n = runRecords == 1 ? 1 : run(wr, first + i, count - i);
      i += n;
      wr.wrId(posted + i - 1).signaled(signal && i == count);
      postList[writes++] = wr;
    }
    int last = (first + count - 1) % slots;
    if (waiter != null) {
      waiters.set(last, waiter);
    }
    try {
      if (writes == 1) {
        qp.postSend(postList[0]);
      } else {
        qp.postSend(postList, writes);
      }
    } catch (VerbsException e) {
      waiters.set(last, null);
      state.dataPathFailed(WcStatus.WR_FLUSH_ERR);
      return WriteResult.DATA_PATH_FAILED;
    }
    if (signal) {
      lastSignaled = lastSequence;
    }
    posted = lastSequence + 1;
    postedWrites += writes;
    epochs.sealed(count, bytes);
    return lastSequence + 1;
  }

  /**
   * Gathers into {@code head} (the prepared request of slot {@code at % slots}) the records after
   * it, of at most {@code left} in all, that land right after it in the same grant (same rkey, same
   * slot in the immediate), within {@link #runRecords} and {@link #RUN_BYTES}.
   *
   * @return the records {@code head} now carries
   */
  private int run(SendWorkRequest head, int at, int left) {
    ScatterGatherList sgl = head.sgl();
    long next = head.remoteAddress() + sgl.length(0);
    long bytes = sgl.length(0);
    int grantSlot = head.immData() >>> 24;
    int n = 1;
    while (n < left && n < runRecords) {
      SendWorkRequest wr = requests[(at + n) % slots];
      ScatterGatherList piece = wr.sgl();
      int length = piece.length(0);
      if (wr.remoteAddress() != next
          || wr.rkey() != head.rkey()
          || wr.immData() >>> 24 != grantSlot
          || bytes + length > RUN_BYTES) {
        break;
      }
      sgl.add(piece.address(0), length, piece.lkey(0));
      next += length;
      bytes += length;
      n++;
    }
    return n;
  }

  /**
   * Posts the fence if one is wanted and this thread gets the lock at once; whoever holds the lock
   * instead sees {@link #fenceWanted} when it unlocks. Never blocks.
   */
  private void tryFence() {
    while (fenceWanted && lock.tryLock()) {
      try {
        fenceWanted = false;
        fenceLocked();
      } finally {
        lock.unlock();
      }
    }
  }

  /** The caller holds the lock: covers unsignaled writes posted after the last signaled one. */
  private void fenceLocked() {
    long tail = posted - 1;
    if (tail <= lastSignaled
        || completed <= lastSignaled
        || state.dataPathFailure() != null
        || state.isClosed()) {
      // nothing unsignaled, a signaled write still to complete covers them, or closed here (a
      // session the host ended still gets its fence: its writes complete, or fail, not hang)
      return;
    }
    fence.wrId(tail);
    try {
      qp.postSend(fence);
    } catch (VerbsException e) {
      state.dataPathFailed(WcStatus.WR_FLUSH_ERR);
      return;
    }
    lastSignaled = tail;
    fences++;
  }

  /**
   * The polling thread: every record up to {@code sequence} completed; {@code status} is the status
   * of that completion.
   */
  void onCompletion(long sequence, WcStatus status) {
    long from = completed;
    long upTo = sequence + 1;
    if (status != WcStatus.SUCCESS && failedAt == Long.MAX_VALUE) {
      failedAt = sequence;
    }
    for (long s = from; s < upTo; s++) {
      CompletableFuture<Void> w = waiters.getAndSet((int) (s % slots), null);
      if (w != null) {
        if (s >= failedAt) {
          WcStatus first = state.dataPathFailure();
          w.completeExceptionally(
              DataPathFailure.of(
                  "write",
                  status == WcStatus.SUCCESS ? first : status,
                  first == status ? null : first));
        } else {
          w.complete(null);
        }
      }
    }
    if (upTo > from) {
      completed = upTo;
    }
    if (status == WcStatus.SUCCESS && upTo > lastSignaled) {
      // The last signaled write completed: unsignaled ones may follow it (checked under the lock,
      // by this thread or, when a writer holds the lock, by that writer as it unlocks).
      fenceWanted = true;
      tryFence();
    }
    WriteCompletionHandler h = handler;
    if (h != null) {
      try {
        h.onWritesCompleted(upTo, status);
      } catch (RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(SealedWriter.class)
            .warn("{}: write completion handler failed", state.name, e);
      }
    }
  }

  /** Fails every write still waiting (close, session lost). */
  void failWaiting(ChannelException cause) {
    for (int i = 0; i < slots; i++) {
      CompletableFuture<Void> w = waiters.getAndSet(i, null);
      if (w != null) {
        w.completeExceptionally(cause);
      }
    }
  }

  /** A record sealed for {@code rel} of a grant, not sent (tests that relocate or tamper). */
  byte[] sealUnsent(GrantTarget t, long rel, byte[] payload) {
    ByteBuffer out = ByteBuffer.allocate(payload.length + SealedLayout.RECORD_OVERHEAD);
    lock.lock();
    try {
      int n = sealer.seal(ByteBuffer.wrap(payload), t.binding(), t.offset() + rel, out, 0);
      if (n < 0) {
        throw new ChannelException(ChannelException.Reason.INVALID_ARGUMENT, "seal refused: " + n);
      }
    } finally {
      unlock();
    }
    return out.array();
  }
}
