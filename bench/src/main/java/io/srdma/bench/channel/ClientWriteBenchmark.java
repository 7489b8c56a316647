package io.srdma.bench.channel;

import io.srdma.channel.Access;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.WriteBatch;
import io.srdma.channel.WriteResult;
import io.srdma.host.HostOptions;
import io.srdma.host.RegionHost;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The client's per-message write path on the soft provider against a real {@link RegionHost} in the
 * same JVM: {@link RemoteGrant#tryWrite} (seal into a registered staging slot, post one
 * WRITE_WITH_IMM) of one record into a ring in the grant, polling completions on the benchmark
 * thread when every slot is in flight; and {@link RemoteGrant#tryWriteBatch} of 8 contiguous pieces
 * sealed as one record (gathered into one array first: one Cipher.update per piece measured slower,
 * SealPathBenchmark), from a direct or a heap caller's buffer. Run with {@code -prof gc}: {@code
 * gc.alloc.rate.norm} is the bytes allocated per operation by every thread of the JVM (client, soft
 * provider and host alike).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class ClientWriteBenchmark {
  private static final long RING = 1 << 20;

  /** Payload bytes per record. */
  @Param({"64", "4096"})
  public int size;

  /**
   * The caller's buffer: {@code direct} (copied once into the sealer's array) or {@code heap}
   * (sealed straight from its array).
   */
  @Param({"direct", "heap"})
  public String payloadKind;

  private Path dir;
  private AuditLog audit;
  private RegionHost host;
  private SecureRdmaClient client;
  private RemoteGrant grant;
  private ByteBuffer payload;
  private WriteBatch batch;
  private long stride;
  private long at;
  private long written;
  private final AtomicLong delivered = new AtomicLong();

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = Files.createTempDirectory("srdma-jmh-client");
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
            "        size: 1MiB",
            "    roles:",
            "      writer:",
            "        permissions: [\"region:write:ring\"]",
            "        operations: [write]",
            "        max-bytes-per-grant: 1MiB",
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
                .audit(new AuditTrail(audit)));
    host.registerRegion("bench", "ring", RING).onRecord(r -> delivered.incrementAndGet());
    client =
        SecureRdmaClient.connect(
            new ClientOptions()
                .credential(ca.issuePeer(PeerIdentity.of("bench", "sender"), Duration.ofDays(1)))
                .trust(ca.trust())
                .host(host.address())
                .hostName("bench"));
    grant = client.grant("ring", EnumSet.of(Access.WRITE), 0, RING, Duration.ofHours(1));
    payload =
        payloadKind.equals("heap") ? ByteBuffer.allocate(size) : ByteBuffer.allocateDirect(size);
    batch = new WriteBatch(8);
    stride = size + 64L;
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    client.close();
    host.close();
    audit.close();
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /**
   * The next record's offset; waits while the host has not opened a ring's worth of records, so no
   * record is overwritten before the host opened it.
   */
  private long next() {
    long ringRecords = RING / stride;
    while (written - delivered.get() > ringRecords / 2) {
      client.pollCompletions();
      Thread.onSpinWait();
    }
    written++;
    long here = at;
    at += stride;
    if (at + stride > RING) {
      at = 0;
    }
    return here;
  }

  /** One record: seal + post, polling completions on this thread under back-pressure. */
  @Benchmark
  public long tryWrite() {
    long where = next();
    long r;
    while ((r = grant.tryWrite(where, payload, 0, size)) == WriteResult.BACK_PRESSURED) {
      if (client.pollCompletions() == 0) {
        Thread.onSpinWait();
      }
    }
    if (r < 0) {
      throw new IllegalStateException(WriteResult.name(r));
    }
    return r;
  }

  /** Eight contiguous pieces of {@code size / 8} bytes: one record, one AES-GCM operation. */
  @Benchmark
  public long tryWriteBatchOfEight() {
    long where = next();
    int piece = Math.max(1, size / 8);
    batch.clear();
    for (int i = 0; i < 8; i++) {
      batch.add(where + (long) i * piece, payload, 0, piece);
    }
    long r;
    while ((r = grant.tryWriteBatch(batch)) == WriteResult.BACK_PRESSURED) {
      if (client.pollCompletions() == 0) {
        Thread.onSpinWait();
      }
    }
    if (r < 0) {
      throw new IllegalStateException(WriteResult.name(r));
    }
    return r;
  }
}
