package io.srdma.bench.channel;

import io.srdma.channel.record.AeadPlan;
import io.srdma.channel.record.AeadProvider;
import io.srdma.channel.record.AeadSelection;
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
 * The per-message path of the record layer with each AES-256-GCM provider of the AEAD selection
 * (docs/data-plane.md): one record sealed from a heap payload into a direct (registered) buffer,
 * one opened from it into a heap buffer, next to the provider's bare cipher doing the same
 * init/AAD/doFinal on heap arrays. Run with {@code -prof gc}: {@code gc.alloc.rate.norm} of {@code
 * seal}/{@code open} minus that of {@code bareSeal}/{@code bareOpen} is what the record layer
 * itself allocates per message (docs/performance.md records it).
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar AeadRecordBenchmark -prof gc
 * java -jar bench/target/benchmarks.jar 'AeadRecordBenchmark\.(seal|open)$' -p provider=openssl,gcrypt,ipsec-mb -prof gc
 * java -jar bench/target/benchmarks.jar 'AeadRecordBenchmark\.(seal|open)$' -p provider=auto -prof gc
 * </pre>
 *
 * {@code openssl}, {@code gcrypt} and {@code ipsec-mb} (libcrypto, libgcrypt, intel-ipsec-mb on
 * native memory) are no JCE providers: they have no bare cipher, so their {@code bareSeal}/{@code
 * bareOpen} refuse to run; their {@code seal}/{@code open} are the library's calls themselves.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public class AeadRecordBenchmark {
  private static final RecordBinding BINDING = RecordBinding.of(7, "acme", "kvcache-shard-0001");
  private static final int MAX = 64 * 1024;

  /**
   * The AES-GCM provider: {@code jdk}, {@code accp} (or {@code openssl}, {@code gcrypt}, {@code
   * ipsec-mb}, see above), or {@code auto}: the process's {@link AeadPlan} (the provider of each
   * record's size; the bare cipher is the one of this size).
   */
  @Param({"jdk", "accp"})
  public String provider;

  /** Payload bytes per record. */
  @Param({"64", "4096", "65536"})
  public int size;

  private DirectionKeys keys;
  private RecordSealer sealer;
  private RecordOpener opener;
  private ByteBuffer payload;
  private ByteBuffer registered;
  private ByteBuffer opened;
  private int recordLength;
  private Cipher cipher;
  private final byte[] nonce = new byte[12];
  private final byte[] sealNonce = new byte[12];
  private final byte[] aad = new byte[60];
  private byte[] plain;
  private byte[] sealed;
  private long counter;

  /** A key, a sealer and an opener of the provider, one record sealed to open. */
  @Setup(Level.Trial)
  public void setUp() throws Exception {
    AeadPlan plan =
        switch (provider) {
          case "auto" -> AeadSelection.current().plan();
          case "accp" -> AeadPlan.single(AeadProvider.accp());
          case "openssl" -> AeadPlan.single(AeadProvider.openssl());
          case "gcrypt" -> AeadPlan.single(AeadProvider.gcrypt());
          case "ipsec-mb" -> AeadPlan.single(AeadProvider.ipsecMb());
          default -> AeadPlan.single(AeadProvider.jdk());
        };
    AeadProvider aead = plan.forPayload(size);
    SecureRandom random = new SecureRandom();
    byte[] key = new byte[DirectionKeys.KEY_LENGTH];
    random.nextBytes(key);
    keys = DirectionKeys.fromMaterial(Direction.INITIATOR_TO_RESPONDER, 0, key, new byte[4]);
    sealer = new RecordSealer(new SealingKeys(keys), MAX, plan);
    opener = new RecordOpener(e -> keys, MAX, false, plan);
    payload = ByteBuffer.allocate(size);
    random.nextBytes(payload.array());
    registered = ByteBuffer.allocateDirect(size + RecordSealer.OVERHEAD);
    opened = ByteBuffer.allocate(size);
    recordLength = sealer.seal(payload, BINDING, 0, registered, 0);
    plain = payload.array().clone();
    if (aead.nativeMemory()) {
      return; // no bare JCE cipher
    }
    cipher = aead.newCipher();
    sealed = new byte[size + 16];
    random.nextBytes(aad);
    keys.writeNonce(counter++, nonce, 0);
    cipher.init(Cipher.ENCRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
    cipher.updateAAD(aad);
    cipher.doFinal(plain, 0, size, sealed, 0);
  }

  /** Zeroizes the key. */
  @TearDown(Level.Trial)
  public void tearDown() {
    keys.close();
  }

  /** One record sealed from the heap payload into registered memory. */
  @Benchmark
  public int seal() {
    return sealer.seal(payload, BINDING, 0, registered, 0);
  }

  /** The record in registered memory opened into a heap buffer (replay check off: same record). */
  @Benchmark
  public OpenResult open() {
    opened.clear();
    return opener.open(registered, 0, recordLength, BINDING, 0, opened);
  }

  private void checkBare() {
    if (cipher == null) {
      throw new IllegalStateException(provider + " has no bare JCE cipher: run seal and open only");
    }
  }

  /** The provider's bare AES-256-GCM seal, heap to heap, fresh nonce: the calls seal makes. */
  @Benchmark
  public int bareSeal() throws Exception {
    checkBare();
    keys.writeNonce(counter++, sealNonce, 0);
    cipher.init(Cipher.ENCRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, sealNonce));
    cipher.updateAAD(aad, 0, aad.length);
    return cipher.doFinal(plain, 0, size, sealed, 0);
  }

  /** The provider's bare AES-256-GCM open (tag checked), heap to heap. */
  @Benchmark
  public int bareOpen() throws Exception {
    checkBare();
    cipher.init(Cipher.DECRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
    cipher.updateAAD(aad, 0, aad.length);
    return cipher.doFinal(sealed, 0, size + 16, plain, 0);
  }
}
