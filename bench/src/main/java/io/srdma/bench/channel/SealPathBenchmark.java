package io.srdma.bench.channel;

import io.srdma.channel.record.AeadProvider;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.RecordBinding;
import io.srdma.channel.record.RecordOpener;
import io.srdma.channel.record.RecordSealer;
import io.srdma.channel.record.SealingKeys;
import io.srdma.keys.Direction;
import io.srdma.keys.DirectionKeys;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
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
 * Where the writer's seal should write (issue 16): the path {@code SealedWriter.tryWrite} takes
 * (caller's buffer copied into a heap array, sealed into the sealer's heap array, copied into the
 * direct staging slot) against {@code Cipher.doFinal(ByteBuffer, ByteBuffer)} from the caller's
 * buffer straight into a reused view of the staging slot (header written into the slot, associated
 * data by {@code updateAAD(byte[])}), for each provider; and the opener's copy-then-decrypt into a
 * heap or a direct destination against a decrypt from the copied array into a view of a direct
 * destination. The views are made once; only the JCE's per-record {@code init} allocates.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar SealPathBenchmark -wi 3 -w 1 -i 5 -r 1 -f 1 -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public class SealPathBenchmark {
  private static final RecordBinding BINDING = RecordBinding.of(7, "acme", "kvcache-shard-0001");
  private static final int MAX = 64 * 1024;
  private static final int HEADER = 20;
  private static final int SLOT = 3; // the record goes at a slot's offset, not at 0

  /** The AES-GCM provider: {@code jdk} or {@code accp}. */
  @Param({"jdk", "accp"})
  public String provider;

  /** Payload bytes per record. */
  @Param({"64", "4096", "65536"})
  public int size;

  private DirectionKeys keys;
  private RecordSealer sealer;
  private RecordOpener opener;
  private Cipher cipher;
  private ByteBuffer heapSrc;
  private ByteBuffer directSrc;
  private ByteBuffer heapSrcView;
  private ByteBuffer directSrcView;
  private byte[] scratch;
  private ByteBuffer scratchBuffer;
  private ByteBuffer staging;
  private ByteBuffer stagingView;
  private int offset;
  private int ownOffset; // openDirectFromCopy's record
  private int recordLength;
  private ByteBuffer heapDst;
  private ByteBuffer directDst;
  private ByteBuffer directDstView;
  private byte[] copied;
  private ByteBuffer copiedView;
  private final byte[] nonce = new byte[12];
  private final byte[] aad = new byte[80];
  private int aadLength;
  private long counter;

  /** A key, a sealer and an opener of the provider, one record sealed to open. */
  @Setup(Level.Trial)
  public void setUp() {
    AeadProvider aead = provider.equals("accp") ? AeadProvider.accp() : AeadProvider.jdk();
    SecureRandom random = new SecureRandom();
    byte[] key = new byte[DirectionKeys.KEY_LENGTH];
    random.nextBytes(key);
    keys = DirectionKeys.fromMaterial(Direction.INITIATOR_TO_RESPONDER, 0, key, new byte[4]);
    sealer = new RecordSealer(new SealingKeys(keys), MAX, aead);
    opener = new RecordOpener(e -> keys, MAX, false, aead);
    cipher = aead.newCipher();
    byte[] bytes = new byte[size];
    random.nextBytes(bytes);
    heapSrc = ByteBuffer.wrap(bytes);
    directSrc = ByteBuffer.allocateDirect(size).put(0, bytes);
    heapSrcView = heapSrc.duplicate();
    directSrcView = directSrc.duplicate();
    scratch = new byte[MAX];
    scratchBuffer = ByteBuffer.wrap(scratch);
    int slotSize = MAX + RecordSealer.OVERHEAD;
    staging = ByteBuffer.allocateDirect(4 * slotSize);
    stagingView = staging.duplicate();
    offset = SLOT * slotSize;
    ownOffset = slotSize;
    aadLength = 60;
    random.nextBytes(aad);
    recordLength = sealer.seal(heapSrc, BINDING, 0, staging, offset);
    heapDst = ByteBuffer.allocate(size);
    directDst = ByteBuffer.allocateDirect(size);
    directDstView = directDst.duplicate();
    copied = new byte[MAX + RecordSealer.OVERHEAD];
    copiedView = ByteBuffer.wrap(copied);
  }

  /** Zeroizes the key. */
  @TearDown(Level.Trial)
  public void tearDown() {
    keys.close();
  }

  /** Today's writer, direct caller buffer: copy into scratch, seal into heap, copy into slot. */
  @Benchmark
  public int sealDirectToday() {
    directSrc.get(0, scratch, 0, size);
    scratchBuffer.limit(size).position(0);
    return sealer.seal(scratchBuffer, BINDING, 0, staging, offset);
  }

  /** Today's sealer, heap caller buffer: sealed from its array into heap, copied into slot. */
  @Benchmark
  public int sealHeapToday() {
    return sealer.seal(heapSrc, BINDING, 0, staging, offset);
  }

  /** Today's writer, heap caller buffer: copy into scratch, seal into heap, copy into slot. */
  @Benchmark
  public int sealHeapViaScratch() {
    heapSrc.get(0, scratch, 0, size);
    scratchBuffer.limit(size).position(0);
    return sealer.seal(scratchBuffer, BINDING, 0, staging, offset);
  }

  /** Today's batch of 8 heap pieces: gathered into scratch, sealed into heap, copied into slot. */
  @Benchmark
  public int sealBatchGather() {
    int piece = size / 8;
    byte[] from = heapSrc.array();
    for (int i = 0; i < 8; i++) {
      System.arraycopy(from, i * piece, scratch, i * piece, piece);
    }
    scratchBuffer.limit(size).position(0);
    return sealer.seal(scratchBuffer, BINDING, 0, staging, offset);
  }

  /** A batch of 8 heap pieces by one Cipher.update each into the heap record, then the slot. */
  @Benchmark
  public int sealBatchUpdate() throws Exception {
    int piece = size / 8;
    byte[] from = heapSrc.array();
    long sequence = counter++;
    writeHeader(sequence, size);
    System.arraycopy(aad, 0, copied, 0, HEADER);
    keys.writeNonce(sequence, nonce, 0);
    cipher.init(Cipher.ENCRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
    cipher.updateAAD(aad, 0, aadLength);
    int at = HEADER;
    for (int i = 0; i < 8; i++) {
      at += cipher.update(from, i * piece, piece, copied, at);
    }
    at += cipher.doFinal(copied, at);
    staging.put(offset, copied, 0, at);
    return at;
  }

  /** doFinal(direct caller buffer, view of the slot). */
  @Benchmark
  public int sealDirectIntoSlot() throws Exception {
    directSrcView.limit(size).position(0);
    return sealIntoSlot(directSrcView, offset);
  }

  /** doFinal(heap caller buffer, view of the slot). */
  @Benchmark
  public int sealHeapIntoSlot() throws Exception {
    heapSrcView.limit(size).position(0);
    return sealIntoSlot(heapSrcView, offset);
  }

  private int sealIntoSlot(ByteBuffer src, int offset) throws Exception {
    long sequence = counter++;
    writeHeader(sequence, size);
    staging.put(offset, aad, 0, HEADER);
    keys.writeNonce(sequence, nonce, 0);
    cipher.init(Cipher.ENCRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
    cipher.updateAAD(aad, 0, aadLength);
    stagingView.limit(offset + size + RecordSealer.OVERHEAD).position(offset + HEADER);
    return HEADER + cipher.doFinal(src, stagingView);
  }

  private void writeHeader(long sequence, int length) {
    aad[0] = 1;
    aad[1] = 0;
    aad[2] = 0;
    aad[3] = 0;
    for (int i = 0; i < 4; i++) {
      aad[4 + i] = 0;
    }
    for (int i = 0; i < 8; i++) {
      aad[8 + i] = (byte) (sequence >>> (56 - 8 * i));
    }
    for (int i = 0; i < 4; i++) {
      aad[16 + i] = (byte) (length >>> (24 - 8 * i));
    }
  }

  /** Today's opener into a heap destination: copy out of the region, decrypt into its array. */
  @Benchmark
  public OpenResult openHeapToday() {
    heapDst.clear();
    return checked(opener.open(staging, offset, recordLength, BINDING, 0, heapDst));
  }

  /** Today's opener into a direct destination: copy out, decrypt into heap, copy into it. */
  @Benchmark
  public OpenResult openDirectToday() {
    directDst.clear();
    return checked(opener.open(staging, offset, recordLength, BINDING, 0, directDst));
  }

  private static OpenResult checked(OpenResult r) {
    if (r != OpenResult.OK) {
      throw new IllegalStateException("opened " + r); // a benchmark of refusals measures nothing
    }
    return r;
  }

  /**
   * The alternative for a direct destination: copy out of the region (kept: a security property),
   * then doFinal(view of the copy, view of the destination). Decrypts a record of its own (the
   * record layer's associated data is not this benchmark's).
   */
  @Benchmark
  public int openDirectFromCopy() throws Exception {
    staging.get(ownOffset + HEADER, copied, HEADER, size + 16);
    cipher.init(Cipher.DECRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
    cipher.updateAAD(aad, 0, aadLength);
    copiedView.limit(HEADER + size + 16).position(HEADER);
    directDstView.clear();
    return cipher.doFinal(copiedView, directDstView);
  }

  /** Makes {@link #openDirectFromCopy} decrypt a valid record of its own, in another slot. */
  @Setup(Level.Iteration)
  public void sealOwnRecord() throws Exception {
    heapSrcView.limit(size).position(0);
    sealIntoSlot(heapSrcView, ownOffset); // nonce and header stay for openDirectFromCopy
  }
}
