package io.srdma.bench.transport;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.zip.CRC32C;
import org.HdrHistogram.Histogram;

/**
 * {@code plain-write}: plaintext RDMA WRITE_WITH_IMM between two RC queue pairs on loopback, each
 * on its own device context of the chosen provider: the unprotected data path the sealed channel is
 * compared with.
 *
 * <p>The receiver owns a ring of {@code depth} message slots; message {@code s} goes to slot {@code
 * s % depth} in one WRITE_WITH_IMM whose immediate is the low 32 bits of {@code s}. The receiver
 * keeps a receive posted per slot, polls its CQ, and delivers a message when its receive completes
 * (the bytes are in its memory by then) and the sequence number in the slot checks out. It returns
 * credits to the sender with a small WRITE_WITH_IMM carrying its delivered count, every {@code
 * depth / 2} messages, so the sender never overwrites a slot the receiver has not delivered and
 * never runs a receive queue dry. At most {@code depth} messages are outstanding (sent, not
 * delivered) and {@code 2 * depth} work requests not completed (the send queue's size); every
 * {@code depth}-th (at most 16th) is signaled, so the responder is asked for one ACK per {@code
 * depth} requests (at most 16). Write completion = the sender's work completion (the responder
 * acknowledged the WRITE). The sender posts every message the window has room for as one post list
 * (doorbell batching), each its own WRITE_WITH_IMM; with {@code --coalesce N}, up to N messages of
 * adjacent slots (at most 64 KiB, never across the ring's end) go as one WRITE_WITH_IMM whose
 * immediate names the last of them, and the receiver delivers and checks each message it covers.
 *
 * <p>Latency runs the same protocol with depth 1: each message is credited at once, and that credit
 * is the acknowledgement. Both ends then poll busy for a while before they block ({@link
 * #awaitCompletions}), as sealed's sender and the host's openers do.
 *
 * <p>Nothing is allocated per message: work requests are built once per slot and patched, and the
 * views of the registered memory are taken once per size.
 */
final class PlainWriteTransport implements BenchTransport {
  static final String NAME = "plain-write";

  /** No completion for this long fails the run. */
  private static final Duration STALL = Duration.ofSeconds(10);

  private static final int CREDIT_RECEIVES = 16;
  private static final int CREDIT_SEND_QUEUE = 64;
  private static final int CREDIT_SIGNAL_EVERY = 16;
  private static final int END_IMM = (int) Payload.END;
  private static final int END_ACK_IMM = (int) Payload.END;

  private final String provider;
  private final PipelineDepth depth;
  private int slots; // ring slots at the prepared size
  private final int coalesce;
  private int perUnit = 1;
  private final WorkCompletion[] senderWcs = newCompletions(32);
  private final WorkCompletion[] receiverWcs = newCompletions(32);
  private final ReceiveWorkRequest dataReceive = new ReceiveWorkRequest(1);
  private final ReceiveWorkRequest creditReceive = new ReceiveWorkRequest(1);

  private int size;
  private String deviceName;
  private DeviceContext senderCtx;
  private DeviceContext receiverCtx;
  private ProtectionDomain senderPd;
  private ProtectionDomain receiverPd;
  private CompletionQueue senderCq;
  private CompletionQueue receiverCq;
  private QueuePair senderQp;
  private QueuePair receiverQp;
  private MemoryRegion src;
  private MemoryRegion dst;
  private MemoryRegion creditIn;
  private MemoryRegion creditOut;
  private ByteBuffer srcView;
  private ByteBuffer dstView;

  // Views taken once (MemoryRegion.buffer() returns a new view each call), absolute access only.
  private ByteBuffer srcStamp;
  private ByteBuffer dstRead;
  private ByteBuffer creditOutView;
  private SendWorkRequest[] dataWrs;
  private SendWorkRequest[] postList;
  private SendWorkRequest creditWr;
  private final CpuSplit cpus;
  private int dataReceivesPosted;
  private int creditReceivesPosted;

  // sender-thread state of the current run
  private long sendDone;
  private long consumed;
  private boolean endAcked;
  private boolean busyWaits; // this run's waits: busy first (latency), or the queue's own
  private final SenderWait senderWait = new SenderWait();
  private final SenderWait receiverWait = new SenderWait(); // the receiver thread's
  private long lastSendCompletionNanos;

  // receiver-thread state of the current run, read after the receiver's future completed
  private long delivered;
  private long sequenceErrors;
  private long lastDeliveredNanos;
  private long credited;
  private long creditsPosted;
  private long creditsDone;
  private final CRC32C receiverCrc = new CRC32C();
  private volatile long deliveredAtNanos;

  PlainWriteTransport(String provider, int depth) {
    this(provider, PipelineDepth.of(depth), 1);
  }

  PlainWriteTransport(String provider, PipelineDepth depth, int coalesce) {
    this(provider, depth, coalesce, CpuSplit.NONE);
  }

  PlainWriteTransport(String provider, PipelineDepth depth, int coalesce, CpuSplit cpus) {
    if (coalesce < 1) {
      throw new IllegalArgumentException("coalesce must be >= 1: " + coalesce);
    }
    this.provider = provider;
    this.depth = depth;
    this.coalesce = coalesce;
    this.cpus = cpus;
  }

  @Override
  public String name() {
    return NAME;
  }

  /** The provider cannot run here (not installed, no device): say so, never substitute another. */
  @Override
  public Optional<String> unavailableReason() {
    return providerUnavailable(provider);
  }

  /** Why {@code provider} has no device here, or empty when it has one. */
  static Optional<String> providerUnavailable(String provider) {
    try {
      RdmaProviders.firstDevice(provider);
      return Optional.empty();
    } catch (VerbsException e) {
      return Optional.of("RDMA provider '" + provider + "': " + e.getMessage());
    }
  }

  /** The provider and device in use, once prepared. */
  String deviceName() {
    return deviceName;
  }

  @Override
  public void prepare(int messageSize) {
    closeResources();
    size = messageSize;
    slots = depth.forSize(messageSize);
    perUnit = Payload.coalesced(coalesce, messageSize);
    Device device = RdmaProviders.firstDevice(provider);
    deviceName = device.providerName() + "/" + device.name();
    senderCtx = device.open(new DeviceOptions());
    receiverCtx = device.open(cpus.receiverDevice());
    senderPd = senderCtx.allocateProtectionDomain();
    receiverPd = receiverCtx.allocateProtectionDomain();
    senderCq = senderCtx.createCompletionQueue(4 * slots + 4 * CREDIT_RECEIVES);
    receiverCq =
        receiverCtx.createCompletionQueue(
            4 * slots + 2 * CREDIT_SEND_QUEUE, cpus.receiveProgress()); // as the host's openers
    senderQp =
        senderPd.createQueuePair(
            new QueuePairAttributes(senderCq, senderCq, 2 * slots + 1, CREDIT_RECEIVES, 1, 1));
    receiverQp =
        receiverPd.createQueuePair(
            new QueuePairAttributes(receiverCq, receiverCq, CREDIT_SEND_QUEUE, slots, 1, 1));
    long ring = (long) slots * messageSize;
    src = senderPd.registerMemory(ByteBuffer.allocateDirect((int) ring), AccessFlags.LOCAL_WRITE);
    dst =
        receiverPd.registerMemory(
            ByteBuffer.allocateDirect((int) ring),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
    creditIn =
        senderPd.registerMemory(
            ByteBuffer.allocateDirect(Long.BYTES),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
    creditOut =
        receiverPd.registerMemory(ByteBuffer.allocateDirect(Long.BYTES), AccessFlags.LOCAL_WRITE);
    senderQp.init(AccessFlags.REMOTE_WRITE);
    receiverQp.init(AccessFlags.REMOTE_WRITE);
    senderQp.readyToReceive(receiverQp.localInfo());
    receiverQp.readyToReceive(senderQp.localInfo());
    senderQp.readyToSend();
    receiverQp.readyToSend();
    srcView = src.buffer().duplicate();
    dstView = dst.buffer().duplicate();
    srcStamp = src.buffer();
    dstRead = dst.buffer();
    creditOutView = creditOut.buffer();
    dataWrs = new SendWorkRequest[slots];
    postList = new SendWorkRequest[slots];
    for (int i = 0; i < slots; i++) {
      Payload.fill(src.buffer(), i * messageSize, messageSize);
      dataWrs[i] =
          new SendWorkRequest(1)
              .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
              .remote(dst.address() + (long) i * messageSize, dst.rkey());
      dataWrs[i].sgl().set(src, (long) i * messageSize, messageSize);
    }
    creditWr =
        new SendWorkRequest(1)
            .opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
            .remote(creditIn.address(), creditIn.rkey());
    creditWr.sgl().set(creditOut, 0, Long.BYTES);
    dataReceivesPosted = 0;
    creditReceivesPosted = 0;
  }

  @Override
  public ThroughputResult throughput(RunSpec spec) throws Exception {
    int depth = Math.min(spec.depth(), slots);
    return run(spec, depth, Math.max(1, depth / 2), null);
  }

  @Override
  public ThroughputResult latency(RunSpec spec, Histogram oneWayNanos) throws Exception {
    return run(spec, 1, 1, oneWayNanos);
  }

  private ThroughputResult run(RunSpec spec, int depth, int creditEvery, Histogram latency)
      throws Exception {
    if (senderQp == null) {
      throw new IllegalStateException("prepare() first");
    }
    while (dataReceivesPosted < slots) {
      receiverQp.postReceive(dataReceive.wrId(0));
      dataReceivesPosted++;
    }
    while (creditReceivesPosted < CREDIT_RECEIVES) {
      senderQp.postReceive(creditReceive.wrId(0));
      creditReceivesPosted++;
    }
    sendDone = 0;
    consumed = 0;
    endAcked = false;
    delivered = 0;
    sequenceErrors = 0;
    receiverCrc.reset();
    boolean verify = spec.verify();
    boolean ack = latency != null;
    busyWaits = ack;
    CompletableFuture<Void> received =
        ReceiverThread.start(
            "srdma-bench-plain-write-receiver",
            cpus,
            () -> receive(creditEvery, verify, ack),
            () -> {
              senderQp.toError();
              receiverQp.toError();
            });
    // Credits bound what is outstanding (sent, not delivered) to depth; the send queue holds twice
    // that, so a signal every depth-th WR (at most 16th) never stalls a window that has room.
    int signalEvery = Math.max(1, Math.min(16, depth));
    int inFlight = 2 * depth;
    CRC32C crc = new CRC32C();
    long start = System.nanoTime();
    lastSendCompletionNanos = start;
    long sent = 0;
    try {
      while (!spec.stop(start, sent) && !received.isDone()) {
        while (sent - consumed >= depth || sent - sendDone >= inFlight) {
          pollSender();
        }
        // Every message the window has room for now goes out in one post list (one doorbell: one
        // gathering write on soft); each is still its own WRITE_WITH_IMM, checked and completed
        // on its own. Latency runs post one at a time.
        int room = (int) Math.min(depth - (sent - consumed), inFlight - (sent - sendDone));
        if (spec.maxMessages() > 0) {
          room = (int) Math.min(room, spec.maxMessages() - sent);
        }
        int count = ack ? 1 : Math.min(room, postList.length);
        int wrs = 0;
        for (int k = 0; k < count; ) {
          long first = sent + k;
          int slot = (int) (first % slots);
          // coalesced: adjacent slots as one WRITE, never across the ring's end
          int n = ack ? 1 : Math.min(Math.min(perUnit, count - k), slots - slot);
          for (int j = 0; j < n; j++) {
            int offset = (slot + j) * size;
            Payload.stamp(srcStamp, offset, first + j);
            if (verify) {
              Payload.checksum(crc, srcView, offset, size);
            }
          }
          long last = first + n - 1;
          postList[wrs++] =
              unit(slot, n)
                  .wrId(last)
                  .immData((int) last)
                  .signaled(ack || (last + 1) / signalEvery > first / signalEvery);
          k += n;
        }
        long t0 = System.nanoTime();
        if (wrs == 1) {
          senderQp.postSend(postList[0]);
        } else {
          senderQp.postSend(postList, wrs);
        }
        sent += count;
        if (ack) {
          while (consumed < sent) {
            pollSender();
          }
          latency.recordValue(Math.max(0, deliveredAtNanos - t0));
        }
      }
      long dataSent = sent;
      long dataCompletionNanos = 0;
      while (sent - consumed >= depth || sent - sendDone >= inFlight) {
        pollSender();
      }
      if (sendDone >= dataSent) {
        dataCompletionNanos = lastSendCompletionNanos;
      }
      int slot = (int) (sent % slots);
      Payload.stamp(srcStamp, slot * size, Payload.END);
      senderQp.postSend(unit(slot, 1).wrId(sent).immData(END_IMM).signaled(true));
      while (sendDone <= dataSent || !endAcked) {
        pollSender();
      }
      if (dataCompletionNanos == 0) {
        dataCompletionNanos = lastSendCompletionNanos;
      }
      ReceiverThread.await(received, spec.drainDeadline(), "the plain-write receiver");
      return new ThroughputResult(
          size,
          dataSent,
          delivered,
          lastDeliveredNanos - start,
          dataSent,
          dataCompletionNanos - start,
          sequenceErrors,
          verify ? crc.getValue() : 0,
          verify ? receiverCrc.getValue() : 0);
    } catch (RuntimeException | TimeoutException e) {
      throw ReceiverThread.failureOr(received, e);
    }
  }

  /** The work request of slot {@code slot}, covering {@code n} adjacent slots. */
  private SendWorkRequest unit(int slot, int n) {
    SendWorkRequest wr = dataWrs[slot];
    if (perUnit > 1) { // its length may have been set for another count
      wr.sgl().set(src, (long) slot * size, n * size);
    }
    return wr;
  }

  /** Waits for and handles the sender's completions: its WRITEs and incoming credits. */
  private void pollSender() throws TimeoutException {
    int n = awaitCompletions(senderCq, senderWcs, senderWait);
    if (n == 0) {
      throw new TimeoutException("plain-write sender: no completion within " + STALL);
    }
    for (int i = 0; i < n; i++) {
      WorkCompletion wc = senderWcs[i];
      if (wc.status() != WcStatus.SUCCESS) {
        throw new IllegalStateException("plain-write sender: " + wc);
      }
      if (wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
        creditReceivesPosted--;
        if (wc.immData() == END_ACK_IMM) {
          endAcked = true;
        } else {
          consumed += wc.immData() - (int) consumed;
        }
        senderQp.postReceive(creditReceive.wrId(0));
        creditReceivesPosted++;
      } else {
        sendDone = Math.max(sendDone, wc.wrId() + 1);
        lastSendCompletionNanos = System.nanoTime();
      }
    }
  }

  /**
   * The receiver's loop: deliver messages, repost receives, return credits: at most one credit per
   * poll batch, once the batch brings the undelivered credit to {@code creditEvery} or more (a
   * batch of 12 returns one credit of 12, not one of 8 and, later, another).
   */
  private void receive(int creditEvery, boolean verify, boolean ack) throws TimeoutException {
    credited = 0;
    creditsPosted = 0;
    creditsDone = 0;
    boolean ended = false;
    boolean endCreditDone = false;
    while (!endCreditDone) {
      int n = awaitCompletions(receiverCq, receiverWcs, receiverWait);
      if (n == 0) {
        throw new TimeoutException("plain-write receiver: no completion within " + STALL);
      }
      for (int i = 0; i < n; i++) {
        WorkCompletion wc = receiverWcs[i];
        if (wc.status() != WcStatus.SUCCESS) {
          throw new IllegalStateException("plain-write receiver: " + wc);
        }
        if (wc.opcode() != WcOpcode.RECV_RDMA_WITH_IMM) {
          // a signaled credit WRITE completed, and with it every earlier one
          creditsDone = wc.wrId() + 1;
          endCreditDone = ended && creditsDone == creditsPosted;
          continue;
        }
        dataReceivesPosted--;
        long expected = delivered;
        if (wc.immData() == END_IMM && !ended) {
          ended = true;
          // Every data credit before the end's: the sender stops reading credits at the end's.
          creditIfDue(creditEvery);
          receiverQp.postReceive(dataReceive.wrId(0));
          dataReceivesPosted++;
          creditWr.wrId(creditsPosted++).immData(END_ACK_IMM).signaled(true);
          receiverQp.postSend(creditWr);
          continue;
        }
        // the immediate names the last message the WRITE covers (the first is the one expected)
        long last = expected + (wc.immData() - (int) expected);
        long count = last - expected + 1;
        if (count < 1 || count > perUnit) {
          sequenceErrors++;
          count = 1;
        }
        for (long seq = expected; seq < expected + count; seq++) {
          int offset = (int) Math.floorMod(seq, (long) slots) * size;
          if (dstRead.getLong(offset) != seq) {
            sequenceErrors++;
          }
          if (verify) {
            Payload.checksum(receiverCrc, dstView, offset, size);
          }
        }
        delivered += count;
        lastDeliveredNanos = System.nanoTime();
        if (ack) {
          deliveredAtNanos = lastDeliveredNanos;
        }
        receiverQp.postReceive(dataReceive.wrId(0));
        dataReceivesPosted++;
      }
      if (!ended) {
        creditIfDue(creditEvery);
      }
    }
  }

  /** Returns the credit for what was delivered, once it is {@code creditEvery} or more. */
  private void creditIfDue(int creditEvery) throws TimeoutException {
    if (delivered - credited < creditEvery) {
      return;
    }
    while (creditsPosted - creditsDone >= CREDIT_SEND_QUEUE - 1) {
      creditsDone = awaitCreditCompletion(creditsDone);
    }
    credited = delivered;
    creditOutView.putLong(0, delivered);
    creditWr
        .wrId(creditsPosted)
        .immData((int) delivered)
        .signaled(creditsPosted % CREDIT_SIGNAL_EVERY == CREDIT_SIGNAL_EVERY - 1);
    creditsPosted++;
    receiverQp.postSend(creditWr);
  }

  /**
   * The next completions of {@code cq}: in latency runs polled busy for a while first ({@link
   * SenderWait}: the sealed sender's wait, as the host's openers spin while the gaps between
   * records are short), since each message waits for the one before it to travel both ways and a
   * blocked thread's wake-up would be most of its latency; then, and in throughput runs, the
   * queue's own wait (whose back-off spins and yields briefly before it blocks).
   *
   * @return the completions taken, 0 when none came within {@link #STALL}
   */
  private int awaitCompletions(CompletionQueue cq, WorkCompletion[] wcs, SenderWait wait) {
    if (busyWaits) {
      wait.start();
      do {
        int n = cq.poll(wcs);
        if (n > 0) {
          return n;
        }
      } while (wait.stayBusy());
    }
    return cq.await(wcs, STALL);
  }

  /** Only while the credit send queue is full: nothing else can arrive before credits flow. */
  private long awaitCreditCompletion(long creditsDone) throws TimeoutException {
    int n = receiverCq.await(receiverWcs, STALL);
    if (n == 0) {
      throw new TimeoutException("plain-write receiver: credit WRITE not completed in " + STALL);
    }
    long done = creditsDone;
    for (int i = 0; i < n; i++) {
      WorkCompletion wc = receiverWcs[i];
      if (wc.status() != WcStatus.SUCCESS || wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM) {
        throw new IllegalStateException("plain-write receiver: unexpected " + wc);
      }
      done = wc.wrId() + 1;
    }
    return done;
  }

  @Override
  public void close() {
    closeResources();
  }

  private void closeResources() {
    AutoCloseable[] all = {
      senderQp,
      receiverQp,
      src,
      dst,
      creditIn,
      creditOut,
      senderCq,
      receiverCq,
      senderPd,
      receiverPd,
      senderCtx,
      receiverCtx
    };
    RuntimeException failure = null;
    for (AutoCloseable c : all) {
      if (c != null) {
        try {
          c.close();
        } catch (Exception e) {
          if (failure == null) {
            failure = new IllegalStateException("closing plain-write resources failed", e);
          } else {
            failure.addSuppressed(e);
          }
        }
      }
    }
    senderQp = null;
    receiverQp = null;
    src = null;
    dst = null;
    creditIn = null;
    creditOut = null;
    senderCq = null;
    receiverCq = null;
    senderPd = null;
    receiverPd = null;
    senderCtx = null;
    receiverCtx = null;
    if (failure != null) {
      throw failure;
    }
  }

  private static WorkCompletion[] newCompletions(int n) {
    WorkCompletion[] wcs = new WorkCompletion[n];
    for (int i = 0; i < n; i++) {
      wcs[i] = new WorkCompletion();
    }
    return wcs;
  }
}
