package io.srdma.bench.channel;

import io.srdma.bench.keys.Schedules;
import io.srdma.channel.record.AeadException;
import io.srdma.channel.record.AeadProvider;
import io.srdma.channel.record.AeadSelection;
import io.srdma.channel.record.OpenResult;
import io.srdma.channel.record.RecordBinding;
import io.srdma.channel.record.RecordOpener;
import io.srdma.channel.record.RecordSealer;
import io.srdma.channel.record.SealingKeys;
import io.srdma.keys.DirectionKeys;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.KeySchedule;
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
 * The record layer on one core against the bare cipher it wraps (the process's AEAD selection when
 * that is a JCE provider; when it is openssl, which has no bare JCE cipher, both sides use ACCP
 * where it loads, else the JDK's — openssl's record layer is in AeadRecordBenchmark, which compares
 * the providers): sealing a heap payload into a direct (registered) buffer and opening a record
 * from a direct region into a heap buffer, next to one AES-256-GCM encryption and decryption of the
 * same size (fresh nonce, the same 60-byte associated data) on heap arrays. The ratio is what the
 * record layer adds: header, associated data, copies in and out of registered memory, sequence and
 * replay bookkeeping.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class RecordBenchmark {
  private static final RecordBinding BINDING = RecordBinding.of(7, "acme", "kvcache-shard-0001");

  /** Payload bytes per record. */
  @Param({"4096", "65536"})
  public int size;

  private KeySchedule sender;
  private KeySchedule receiver;
  private RecordSealer sealer;
  private RecordOpener opener;
  private ByteBuffer payload;
  private ByteBuffer registered;
  private ByteBuffer opened;
  private int recordLength;
  private Cipher cipher;
  private DirectionKeys keys;
  private final byte[] nonce = new byte[12];
  private final byte[] aad = new byte[60];
  private byte[] plain;
  private byte[] sealed;
  private long counter;

  /** A real key schedule (X25519 + HKDF), a sealer and an opener, one record sealed to open. */
  @Setup(Level.Trial)
  public void setUp() throws Exception {
    SecureRandom random = new SecureRandom();
    KeySchedule[] ends = Schedules.pair(random);
    sender = ends[0];
    receiver = ends[1];
    AeadProvider aead = jceProvider();
    sealer = new RecordSealer(new SealingKeys(sender.sendKeys()), 64 * 1024, aead);
    opener =
        new RecordOpener(
            epoch -> {
              try {
                return receiver.receiveKeys(epoch);
              } catch (KeyExchangeException e) {
                return null;
              }
            },
            64 * 1024,
            false,
            aead);
    payload = ByteBuffer.allocate(size);
    random.nextBytes(payload.array());
    registered = ByteBuffer.allocateDirect(size + RecordSealer.OVERHEAD);
    opened = ByteBuffer.allocate(size);
    recordLength = sealer.seal(payload, BINDING, 0, registered, 0);
    cipher = aead.newCipher(); // the cipher the record layer uses
    keys = sender.sendKeys();
    plain = payload.array().clone();
    sealed = new byte[size + 16];
    random.nextBytes(aad);
  }

  /**
   * The selection's provider of large records if it is a JCE one, else ACCP where it loads, else
   * the JDK's.
   */
  private static AeadProvider jceProvider() {
    AeadProvider selected = AeadSelection.current().plan().bulk();
    if (!selected.nativeMemory()) {
      return selected;
    }
    try {
      return AeadProvider.accp();
    } catch (AeadException e) {
      return AeadProvider.jdk();
    }
  }

  /** Zeroizes the keys. */
  @TearDown(Level.Trial)
  public void tearDown() {
    sender.close();
    receiver.close();
  }

  /** One record sealed from the heap payload into registered memory, as the writer seals it. */
  @Benchmark
  public int seal() {
    return sealer.seal(payload, 0, size, BINDING, 0, registered, 0);
  }

  /** The record in registered memory opened into a heap buffer (replay check off: same record). */
  @Benchmark
  public OpenResult open() {
    opened.clear();
    return opener.open(registered, 0, recordLength, BINDING, 0, opened);
  }

  /** Bare JDK AES-256-GCM encryption, heap to heap, fresh nonce. */
  @Benchmark
  public int gcmEncrypt() throws Exception {
    keys.writeNonce(counter++, nonce, 0);
    cipher.init(Cipher.ENCRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
    cipher.updateAAD(aad);
    return cipher.doFinal(plain, 0, size, sealed, 0);
  }

  /** Bare JDK AES-256-GCM decryption (tag checked), heap to heap. */
  @Benchmark
  public int gcmDecrypt() throws Exception {
    cipher.init(Cipher.DECRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
    cipher.updateAAD(aad);
    return cipher.doFinal(sealed, 0, size + 16, plain, 0);
  }

  /** Makes {@link #gcmDecrypt} decrypt a valid ciphertext. */
  @Setup(Level.Iteration)
  public void sealOnce() throws Exception {
    keys.writeNonce(counter++, nonce, 0);
    cipher.init(Cipher.ENCRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
    cipher.updateAAD(aad);
    cipher.doFinal(plain, 0, size, sealed, 0);
  }
}
