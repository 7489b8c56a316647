package io.srdma.bench.transport;

import io.srdma.channel.Access;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteBatch;
import io.srdma.channel.WriteResult;
import io.srdma.host.HostOptions;
import io.srdma.host.HostedRegion;
import io.srdma.host.RegionHost;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.HdrHistogram.Histogram;

/**
 * {@code sealed}: the product's data path. A {@link SecureRdmaClient} (tenant peer) writes through
 * a grant into a region a {@link RegionHost} registered, on the chosen provider over loopback: each
 * message is sealed with AES-256-GCM into records of at most 64 KiB, written with WRITE_WITH_IMM,
 * and counted as delivered when the host has opened its last record and checked its sequence number
 * (so like the TLS baselines, it counts bytes the receiver decrypted).
 *
 * <p>The region is a ring of {@code depth} message slots; the sender starts message {@code s} only
 * when message {@code s - depth} was delivered, so it never overwrites a record the host has not
 * opened. Write completion = every record's work completion at the sender. The client's staging
 * ring ({@link #stagingSlots}) holds twice the most records the window of the size being measured
 * keeps outstanding, so its back-pressure does not cap the window — and no more, so the slots the
 * writer cycles through stay in the CPU's caches (the client is connected again when a size needs
 * another ring).
 *
 * <p>With {@code --coalesce N} (throughput runs of one-record messages), each slot holds up to N
 * messages end to end (at most 64 KiB) and the sender gives them to {@link
 * RemoteGrant#tryWriteBatch} as contiguous pieces, which the SDK seals as one record: one AES-GCM
 * operation and one WRITE_WITH_IMM for N messages. The host delivers one record; the receiver here
 * counts and checks each message in it. A slot holds fewer when the window has less room; every
 * slot still holds at least one message, so the window of {@code depth} messages keeps a slot from
 * being reused before the host opened its record. The counting and checking: {@link
 * SealedReceiver}.
 *
 * <p>Per message nothing is allocated and no lock taken: {@link RemoteGrant#tryWrite} seals and
 * posts on the bench thread (in throughput runs of one-record messages, {@link
 * RemoteGrant#tryWriteBatch} posts every message the window has room for as one post list, each its
 * own record, up to {@link #BATCH} records or {@link #LIST_BYTES}); on back-pressure the bench
 * thread polls completions itself; it waits for delivery as {@link SealedReceiver#awaitDelivered}
 * does (busy for a while, then parked until the host's thread unparks it, once per wait).
 */
final class SealedTransport implements BenchTransport {
  static final String NAME = "sealed";
  private static final Duration STALL = Duration.ofSeconds(10);
  private static final long REGION_BYTES = 64L << 20;
  private static final int RECORD = SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD;
  private static final int SPINS = 100;

  /**
   * Most records one post list carries in throughput runs, unless {@link #LIST_BYTES} allows more
   * (messages of a few records each, of more than 64 KiB, go as lists of this many).
   */
  static final int BATCH = 32;

  /**
   * Records of small messages go out as post lists of up to this many bytes (or {@link #BATCH}
   * records, whichever is more): 64 B messages as plain-write's sender posts them, every message
   * the window has room for in one list (up to 256 at {@code --depth auto}), while a list of 4 KiB
   * messages stays at 32 (128 KiB: longer ones, measured, cost 20 % at 4 KiB on 2 vCPUs).
   */
  static final int LIST_BYTES = 128 << 10;

  /**
   * Receives the host keeps posted for the bench's one session, as plain-write's receiver keeps one
   * per slot: every record not yet opened holds one, and the window (at most 1,024 messages, and
   * 1,024 records of 64 KiB in the 64 MiB region) never has more outstanding. The host's default,
   * 256, would make a deeper window wait for receives (RNR).
   */
  static final int RECEIVES = 2048;

  /** Sessions the bench's host admits: one is used; few, so {@link #RECEIVES} fit its queues. */
  private static final int MAX_SESSIONS = 4;

  /** Most pieces (messages) one batch write carries. */
  private static final int MAX_PIECES = 1024;

  private final String provider;
  private final PipelineDepth depth;
  private int slots; // ring slots at the prepared size
  private final int coalesce;
  private int perRecord = 1; // messages coalesced into one record in throughput runs
  private long slotsUsed; // ring slots written in this run
  private Path dir;
  private AuditLog audit;
  private RegionHost host;
  private HostedRegion region;
  private SecureRdmaClient client;
  private int clientStaging; // the connected client's staging slots
  private Credential senderCredential;
  private DeploymentTrust trust;
  private RemoteGrant grant;
  private int size;
  private long slotBytes;
  private ByteBuffer message;
  private ByteBuffer pieces; // messages end to end, for batch writes; one-record sizes only
  private int maxPieces;
  private final WriteBatch batch = new WriteBatch(MAX_PIECES);
  private final BackPressure backPressure = new BackPressure();
  private final SealedReceiver receiver = new SealedReceiver(STALL);
  private volatile long lastCompletionNanos;
  private final CpuSplit cpus;

  SealedTransport(String provider, int depth, int coalesce) {
    this(provider, PipelineDepth.of(depth), coalesce);
  }

  SealedTransport(String provider, PipelineDepth depth, int coalesce) {
    this(provider, depth, coalesce, CpuSplit.NONE);
  }

  SealedTransport(String provider, PipelineDepth depth, int coalesce, CpuSplit cpus) {
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

  @Override
  public Optional<String> unavailableReason() {
    return PlainWriteTransport.providerUnavailable(provider);
  }

  @Override
  public void prepare(int messageSize) throws Exception {
    int slots = depth.forSize(messageSize);
    int together = messageSize <= RECORD ? Payload.coalesced(coalesce, messageSize) : 1;
    long slotNeed =
        together > 1
            ? (long) together * messageSize + SealedLayout.RECORD_OVERHEAD
            : SealedLayout.sealedLength(messageSize, SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD);
    if (slots * slotNeed > REGION_BYTES) {
      throw new IllegalArgumentException(
          "depth "
              + slots
              + " x "
              + slotNeed
              + " B (a slot of "
              + together
              + " message(s) of "
              + messageSize
              + " B) does not fit the "
              + REGION_BYTES
              + "-byte bench region");
    }
    if (host == null) {
      start();
    }
    if (grant != null) {
      grant.release().toCompletableFuture().get(10, TimeUnit.SECONDS);
      grant = null;
    }
    int staging = stagingSlots(slots, recordsOf(messageSize));
    if (client == null || staging != clientStaging) {
      connect(staging);
    }
    size = messageSize;
    this.slots = slots;
    perRecord = together;
    slotBytes = slotNeed;
    grant =
        client.grant("ring", EnumSet.of(Access.WRITE), 0, slots * slotBytes, Duration.ofHours(1));
    // Heap sources, as the TLS transports' and the AEAD bound's: the SDK seals a heap buffer
    // straight from its array (the JDK's and ACCP's GCM work on arrays only; a direct one is copied
    // first); openssl and gcrypt read a heap buffer of 16 KiB or more pinned, a smaller one via its
    // scratch.
    message = ByteBuffer.allocate(messageSize);
    Payload.fill(message, 0, messageSize);
    pieces = null;
    maxPieces = Math.min(MAX_PIECES, Math.min(slots, listRecords(slotBytes)) * perRecord);
    if (messageSize <= RECORD) {
      pieces = ByteBuffer.allocate(maxPieces * messageSize);
      for (int i = 0; i < maxPieces; i++) {
        Payload.fill(pieces, i * messageSize, messageSize);
      }
    }
  }

  private void start() throws IOException {
    dir = Files.createTempDirectory("srdma-bench-sealed");
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    audit = AuditLog.open(dir.resolve("audit.jsonl"));
    String policy =
        String.join(
            "\n",
            "version: 1",
            "tenants:",
            "  bench:",
            "    regions:",
            "      ring:",
            "        size: 64MiB",
            "    roles:",
            "      writer:",
            "        permissions: [\"region:write:ring\"]",
            "        operations: [write]",
            "        max-bytes-per-grant: 64MiB",
            "        max-ttl: 2h",
            "        max-live-grants: 4",
            "    peers:",
            "      - identity: srdma://bench/sender",
            "        roles: [writer]",
            "");
    host =
        RegionHost.start(
            new HostOptions()
                .credential(
                    ca.issuePeer(
                        PeerIdentity.of(RegionHost.HOST_TENANT, "bench"), Duration.ofDays(1)))
                .trust(ca.trust())
                .policy(new PolicyLoader().parse("bench-policy.yaml", policy))
                .audit(new AuditTrail(audit))
                .receiveDepth(RECEIVES)
                .maxSessions(MAX_SESSIONS)
                .provider(provider)
                .device(cpus.receiverDevice())
                .openerCpus(cpus.receiver())
                .openerProgress(cpus.receiveProgress()));
    region = host.registerRegion("bench", "ring", REGION_BYTES);
    region.onRecord(receiver::onRecord);
    senderCredential = ca.issuePeer(PeerIdentity.of("bench", "sender"), Duration.ofDays(1));
    trust = ca.trust();
  }

  /** (Re)connects the client with {@code staging} slots; the previous one is closed first. */
  private void connect(int staging) {
    if (client != null) {
      client.close();
      client = null;
    }
    client =
        SecureRdmaClient.connect(
            new ClientOptions()
                .credential(senderCredential)
                .trust(trust)
                .host(host.address())
                .hostName("bench")
                .provider(provider)
                .stagingSlots(staging)
                .requestTimeout(Duration.ofSeconds(10)));
    clientStaging = staging;
    client.onWritesCompleted((position, status) -> lastCompletionNanos = System.nanoTime());
  }

  /**
   * Most records of {@code recordBytes} each (sealed, with any messages coalesced into one) that
   * one post list of a throughput run carries: {@link #BATCH}, or more while they fit in {@link
   * #LIST_BYTES}; the window's room bounds it too.
   */
  static int listRecords(long recordBytes) {
    return (int) Math.max(BATCH, LIST_BYTES / recordBytes);
  }

  /**
   * Records the client may have in flight while a window of {@code window} messages of {@code
   * records} records each is measured: twice the records the window keeps outstanding, as
   * plain-write's send queue holds twice its window of work requests, and at least the SDK's
   * default. A write completes when its acknowledgement comes back, which may be after the host
   * opened it (signaled writes are spaced out), so a staging ring only as deep as the window would
   * cap the run below it. A deeper one costs speed: every slot is a whole record's room (64 KiB),
   * and the writer seals into them in turn, so 512 slots of 64 KiB records stream 32 MiB through
   * memory where 64 stay in the caches (a 64 KiB copy out of a slot: 2 µs against 5 µs,
   * performance.md session 39).
   */
  static int stagingSlots(int window, int records) {
    return Math.max(ClientOptions.DEFAULT_STAGING_SLOTS, 2 * window * records);
  }

  private static int recordsOf(int messageSize) {
    return (messageSize + RECORD - 1) / RECORD;
  }

  /** Records the host opened in the last run (tests: coalescing makes fewer than messages). */
  long recordsOpened() {
    return receiver.recordsOpened();
  }

  @Override
  public ThroughputResult throughput(RunSpec spec) throws Exception {
    return run(spec, Math.min(spec.depth(), slots), null);
  }

  @Override
  public ThroughputResult latency(RunSpec spec, Histogram oneWayNanos) throws Exception {
    return run(spec, 1, oneWayNanos);
  }

  private ThroughputResult run(RunSpec spec, int depth, Histogram latency) throws Exception {
    if (grant == null) {
      throw new IllegalStateException("prepare() first");
    }
    long base = receiver.delivered();
    boolean verify = spec.verify();
    receiver.reset(size, verify);
    CRC32C crc = new CRC32C();
    int records = recordsOf(size);
    long start = System.nanoTime();
    long sent = 0;
    long last = 0;
    slotsUsed = 0;
    ByteBuffer checked = pieces == null ? null : pieces.duplicate();
    while (latency == null && records == 1 && !spec.stop(start, sent)) {
      // Throughput, one record per message (or per perRecord messages, coalesced): every message
      // the window has room for now goes out as one post list (one doorbell, one gathering write
      // on soft), as plain-write's sender does. Wake for half the window, as plain-write's credits
      // come: fewer wake-ups, fuller lists.
      receiver.awaitDelivered(base + sent - depth + Math.max(1, depth / 2));
      long room = receiver.delivered() - base + depth - sent;
      int n = (int) Math.min(Math.min(room, maxPieces), spec.allowed(start, sent));
      batch.clear();
      int k = 0;
      long slotAt = 0;
      for (; k < n; k++) {
        if (k % perRecord == 0) {
          slotAt = (slotsUsed++ % slots) * slotBytes; // a slot of its own for each record
        }
        Payload.stamp(pieces, k * size, sent + k);
        if (verify) {
          Payload.checksum(crc, checked, k * size, size);
        }
        batch.add(slotAt + (long) (k % perRecord) * size, pieces, k * size, size);
      }
      if (k > 0) {
        last = writeBatch();
        sent += k;
      }
    }
    while (!spec.stop(start, sent)) {
      receiver.awaitDelivered(base + sent - depth + 1);
      Payload.stamp(message, 0, sent);
      if (verify) {
        Payload.checksum(crc, message.duplicate(), 0, size);
      }
      long at = (slotsUsed++ % slots) * slotBytes;
      if (latency == null) {
        // throughput, a message of several records: its records as post lists of up to BATCH
        for (int k = 0; k < records; ) {
          batch.clear();
          for (int n = 0; n < BATCH && k < records; n++, k++) {
            int from = k * RECORD;
            batch.add(
                at + (long) k * (RECORD + SealedLayout.RECORD_OVERHEAD),
                message,
                from,
                Math.min(RECORD, size - from));
          }
          last = writeBatch();
        }
        sent++;
        continue;
      }
      long t0 = System.nanoTime();
      for (int k = 0; k < records; k++) {
        int from = k * RECORD;
        last =
            write(
                at + (long) k * (RECORD + SealedLayout.RECORD_OVERHEAD),
                from,
                Math.min(RECORD, size - from));
      }
      sent++; // latency: one message at a time, record by record
      receiver.awaitDelivered(base + sent);
      latency.recordValue(Math.max(0, receiver.lastDeliveredNanos() - t0));
    }
    awaitCompleted(last);
    receiver.awaitDelivered(base + sent);
    return new ThroughputResult(
        size,
        sent,
        receiver.delivered() - base,
        receiver.lastDeliveredNanos() - start,
        sent,
        lastCompletionNanos - start,
        receiver.sequenceErrors(),
        verify ? crc.getValue() : 0,
        receiver.crc());
  }

  /** One record through the non-allocating write; on back-pressure see {@link BackPressure}. */
  private long write(long at, int from, int length) throws TimeoutException {
    long r;
    backPressure.reset();
    while ((r = grant.tryWrite(at, message, from, length)) == WriteResult.BACK_PRESSURED) {
      backPressure.await();
    }
    return accepted(r, "write");
  }

  /** The batch through the non-allocating batch write; on back-pressure as {@link #write}. */
  private long writeBatch() throws TimeoutException {
    long r;
    backPressure.reset();
    while ((r = grant.tryWriteBatch(batch)) == WriteResult.BACK_PRESSURED) {
      backPressure.await();
    }
    return accepted(r, "batch write");
  }

  private static long accepted(long result, String what) {
    if (result <= 0) {
      throw new IllegalStateException("sealed: " + what + " refused: " + WriteResult.name(result));
    }
    return result;
  }

  /**
   * Waiting out back-pressure (every staging slot in flight), one instance reused: polls the
   * client's completions itself, idles when there were none, and fails the run after {@link #STALL}
   * without a slot freed.
   */
  private final class BackPressure {
    private int idle;
    private long deadline;

    void reset() {
      idle = 0;
      deadline = 0;
    }

    void await() throws TimeoutException {
      if (client.pollCompletions() > 0) {
        idle = 0;
        return;
      }
      if (deadline == 0) {
        deadline = System.nanoTime() + STALL.toNanos();
      } else if (System.nanoTime() - deadline > 0) {
        throw new TimeoutException(
            "sealed: no staging slot freed or receive credited for " + STALL);
      }
      idle(idle++);
    }
  }

  private void awaitCompleted(long position) throws TimeoutException {
    long deadline = System.nanoTime() + STALL.toNanos();
    for (int idle = 0; client.completedPosition() < position; idle++) {
      if (client.pollCompletions() == 0) {
        if (System.nanoTime() - deadline > 0) {
          throw new TimeoutException("sealed: writes did not complete within " + STALL);
        }
        idle(idle);
      }
    }
    if (client.dataPathFailure() != null) {
      throw new IllegalStateException("sealed: a write failed: " + client.dataPathFailure());
    }
  }

  /** Spins briefly, then yields, then parks a little longer each time (at most 200 µs). */
  private static void idle(int idle) {
    if (idle < SPINS) {
      Thread.onSpinWait();
    } else if (idle < SPINS + 10) {
      Thread.yield();
    } else {
      LockSupport.parkNanos(Math.min(200_000L, 1_000L << Math.min(8, idle - SPINS - 10)));
    }
  }

  @Override
  public void close() {
    if (client != null) {
      client.close();
      client = null;
    }
    if (host != null) {
      host.close();
      host = null;
    }
    try {
      if (audit != null) {
        audit.close();
        audit = null;
      }
      if (dir != null) {
        try (Stream<Path> s = Files.walk(dir)) {
          s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        dir = null;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
