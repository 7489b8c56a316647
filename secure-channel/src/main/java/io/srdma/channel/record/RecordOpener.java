package io.srdma.channel.record;

import io.srdma.keys.DirectionKeys;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.KeySchedule;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.function.IntFunction;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;

/**
 * Opens records of one direction of one session. The record is first copied out of the (remotely
 * writable) region, so the bytes authenticated are the bytes decrypted even if the writer keeps
 * writing. Rejects malformed, truncated, replayed, relocated and tampered records with a typed
 * {@link OpenResult}; the replay window of each epoch is moved only by authentic records.
 *
 * <p>One instance per reading thread; its {@link Cipher}s and native contexts come from the {@link
 * AeadSelection}'s {@link AeadPlan} (each record is opened by the provider the plan names for its
 * payload size, read from the header before anything else is done with the record). A direct
 * destination is decrypted into an array and copied: {@code Cipher.doFinal(ByteBuffer, ByteBuffer)}
 * from the copied record into it was measured slower at 4 and 64 KiB with both providers on JDK 17
 * and Java 25, and allocates (ACCP: an array of the record's size), {@code SealPathBenchmark}. With
 * a native-memory provider ({@code openssl}, {@code gcrypt}) the record is copied out of the region
 * into the workspace's native context instead and opened from there straight into a direct
 * destination (or a heap one of 16 KiB or more, pinned; smaller heap ones through the context's
 * scratch), with nothing allocated ({@link NativeGcm}).
 */
public final class RecordOpener {
  private final IntFunction<DirectionKeys> keysForEpoch;
  private final PlanCiphers ciphers; // native contexts: the workspace's
  private final int maxPayload;
  private final boolean replayProtection;
  private final Workspace workspace;
  private final byte[] nonce = new byte[DirectionKeys.NONCE_LENGTH];
  private final byte[] aad = new byte[RecordSealer.AAD_MAX];
  private final RecordFlyweight header = new RecordFlyweight();
  private int currentEpoch = -1;
  private ReplayWindow current = new ReplayWindow();
  private int previousEpoch = -1;
  private ReplayWindow previous = new ReplayWindow();
  private int lastLength;
  private long lastSequence;
  private int lastEpoch;

  /**
   * An opener.
   *
   * @param keysForEpoch the receive keys of an epoch, or null when there are none
   * @param maxPayload the largest payload accepted in one record
   */
  public RecordOpener(IntFunction<DirectionKeys> keysForEpoch, int maxPayload) {
    this(keysForEpoch, maxPayload, true);
  }

  /**
   * An opener that may skip the replay check: for records fetched by RDMA READ, which a reader may
   * legitimately fetch again. Authenticity and placement (grant, tenant, region, offset) are still
   * checked; freshness is not.
   *
   * @param keysForEpoch the receive keys of an epoch, or null when there are none
   * @param maxPayload the largest payload of one record, in bytes
   * @param replayProtection whether a sequence seen before is refused
   */
  public RecordOpener(
      IntFunction<DirectionKeys> keysForEpoch, int maxPayload, boolean replayProtection) {
    this(keysForEpoch, maxPayload, replayProtection, AeadSelection.current().plan());
  }

  /**
   * An opener whose cipher comes from {@code aead} rather than the process's {@link AeadSelection}
   * (benchmarks comparing providers).
   *
   * @param keysForEpoch the receive keys of an epoch, or null when there are none
   * @param maxPayload the largest payload of one record, in bytes
   * @param replayProtection whether a sequence seen before is refused
   * @param aead the AES-GCM provider
   */
  public RecordOpener(
      IntFunction<DirectionKeys> keysForEpoch,
      int maxPayload,
      boolean replayProtection,
      AeadProvider aead) {
    this(keysForEpoch, maxPayload, replayProtection, AeadPlan.single(aead));
  }

  /**
   * An opener that opens each record with the provider {@code plan} names for its size.
   *
   * @param keysForEpoch the receive keys of an epoch, or null when there are none
   * @param maxPayload the largest payload of one record, in bytes
   * @param replayProtection whether a sequence seen before is refused
   * @param plan the AES-GCM provider of each record size
   */
  public RecordOpener(
      IntFunction<DirectionKeys> keysForEpoch,
      int maxPayload,
      boolean replayProtection,
      AeadPlan plan) {
    this(keysForEpoch, maxPayload, replayProtection, plan, new Workspace(maxPayload, false));
  }

  private RecordOpener(
      IntFunction<DirectionKeys> keysForEpoch,
      int maxPayload,
      boolean replayProtection,
      AeadPlan plan,
      Workspace workspace) {
    checkMaxPayload(maxPayload);
    if (workspace.maxPayload < maxPayload) {
      throw new RecordException(
          RecordException.Reason.BAD_ARGUMENT,
          "workspace for payloads of " + workspace.maxPayload + " bytes, opener for " + maxPayload);
    }
    this.keysForEpoch = keysForEpoch;
    this.replayProtection = replayProtection;
    this.maxPayload = maxPayload;
    this.workspace = workspace;
    this.ciphers = new PlanCiphers(plan, maxPayload, (aead, max) -> workspace.nativeGcm(aead));
  }

  static void checkMaxPayload(int maxPayload) {
    if (maxPayload < 1 || maxPayload > (1 << 24)) {
      throw new RecordException(
          RecordException.Reason.BAD_ARGUMENT, "maxPayload must be 1..16 MiB");
    }
  }

  /**
   * The scratch space an opener copies a record into before checking it: as large as the largest
   * record. Openers used on one thread only may share one (a host's opener thread opens the records
   * of all its sessions), so that an idle session's opener holds no buffer of the record size. Not
   * thread-safe: share it only among openers used by the same thread.
   *
   * <p>A shared workspace holds another session's ciphertext between records (never its plaintext:
   * the second buffer, used only for a destination without an array, is zeroed after each record),
   * and {@link #open} reads from it only the bytes it copied in for that record. With a
   * native-memory provider (openssl, gcrypt, ipsec-mb) the record is copied into the workspace's
   * native context instead (one per workspace, so one per opening thread), which zeroes any
   * plaintext it held for a heap destination once it is copied out.
   */
  public static final class Workspace {
    final int maxPayload;
    final boolean shared;
    final byte[] head = new byte[RecordFlyweight.HEADER_LENGTH];
    private byte[] record; // for a JCE provider: made on first need
    // for native-memory providers: made on first need, one per library (a plan may use two)
    private NativeGcm gcm;
    private NativeGcm otherGcm;
    byte[] plain; // for a destination without an array only: made on first need

    /**
     * A workspace to share among the openers of one thread.
     *
     * @param maxPayload the largest payload any of them accepts
     */
    public Workspace(int maxPayload) {
      this(maxPayload, true);
    }

    private Workspace(int maxPayload, boolean shared) {
      checkMaxPayload(maxPayload);
      this.maxPayload = maxPayload;
      this.shared = shared;
    }

    byte[] record() {
      if (record == null) {
        record = new byte[maxPayload + RecordSealer.OVERHEAD];
      }
      return record;
    }

    /** The native context, or null (tests). */
    NativeGcm nativeGcmForTest() {
      return gcm;
    }

    NativeGcm nativeGcm(AeadProvider aead) {
      if (gcm == null) {
        gcm = aead.newNativeGcm(maxPayload);
      } else if (!gcm.libraryName().equals(aead.name())) {
        if (otherGcm == null) {
          otherGcm = aead.newNativeGcm(maxPayload);
        } else if (!otherGcm.libraryName().equals(aead.name())) {
          throw new AeadException(
              "a workspace serves two native AES-GCM libraries at most; asked for a third: "
                  + aead.name());
        }
        return otherGcm;
      }
      return gcm;
    }
  }

  /**
   * A plaintext buffer of {@code capacity} bytes of the kind the process's AES-GCM of large records
   * ({@link AeadPlan#bulk()} of {@link AeadSelection#current()}, where copies cost the most) opens
   * into with the fewest copies: direct for a native-memory provider (opened straight into it; a
   * heap one under 16 KiB costs a copy through the context's scratch and a wipe of it), heap for a
   * JCE one (decrypted straight into its array). Thread-safe.
   */
  public static ByteBuffer newPlaintextBuffer(int capacity) {
    return AeadSelection.current().plan().bulk().nativeMemory()
        ? ByteBuffer.allocateDirect(capacity)
        : ByteBuffer.allocate(capacity);
  }

  /** An opener taking receive keys from a session's key schedule. */
  public static RecordOpener forSchedule(KeySchedule schedule, int maxPayload) {
    return forSchedule(schedule, maxPayload, true);
  }

  /**
   * An opener taking receive keys from a session's key schedule, with or without the replay check
   * (see {@link #RecordOpener(IntFunction, int, boolean)}).
   */
  public static RecordOpener forSchedule(
      KeySchedule schedule, int maxPayload, boolean replayProtection) {
    return new RecordOpener(
        epoch -> {
          try {
            return schedule.receiveKeys(epoch);
          } catch (KeyExchangeException e) {
            return null;
          }
        },
        maxPayload,
        replayProtection);
  }

  /**
   * An opener taking receive keys from a session's key schedule, with the replay check, that copies
   * records into {@code workspace}, shared with other openers used on the same thread only.
   */
  public static RecordOpener forSchedule(
      KeySchedule schedule, int maxPayload, Workspace workspace) {
    return new RecordOpener(
        epoch -> {
          try {
            return schedule.receiveKeys(epoch);
          } catch (KeyExchangeException e) {
            return null;
          }
        },
        maxPayload,
        true,
        AeadSelection.current().plan(),
        workspace);
  }

  /**
   * Opens the record at {@code offset} of {@code source}, which holds at most {@code available}
   * bytes for it (before its limit: a range past the limit is {@code MALFORMED}), and writes its
   * plaintext at {@code plaintext}'s position (advancing it).
   *
   * @param binding grant, tenant and region the record must belong to
   * @param remoteOffset the offset in the region the record was written at
   */
  public OpenResult open(
      ByteBuffer source,
      int offset,
      int available,
      RecordBinding binding,
      long remoteOffset,
      ByteBuffer plaintext) {
    if (offset < 0 || available < RecordSealer.OVERHEAD || source.limit() - offset < available) {
      return available < RecordSealer.OVERHEAD && available >= 0
          ? OpenResult.TRUNCATED
          : OpenResult.MALFORMED;
    }
    byte[] head = workspace.head;
    source.get(offset, head, 0, RecordFlyweight.HEADER_LENGTH);
    header.wrap(head, 0);
    int length = header.length();
    if (header.version() != RecordFlyweight.VERSION
        || header.flags() != 0
        || header.reserved() != 0
        || length < 0
        || length > maxPayload) {
      return OpenResult.MALFORMED;
    }
    if (available - RecordSealer.OVERHEAD < length) {
      return OpenResult.TRUNCATED;
    }
    if (plaintext.remaining() < length) {
      return OpenResult.NO_ROOM;
    }
    int epoch = header.epoch();
    long sequence = header.sequence();
    // Without replay protection no window is kept (none would ever become current, and looking
    // one up would allocate a fresh window per record); the keys decide which epochs open.
    ReplayWindow window = null;
    if (replayProtection) {
      window = windowFor(epoch);
      if (window == null) {
        return OpenResult.UNKNOWN_EPOCH;
      }
      if (!window.isFresh(sequence)) {
        return OpenResult.REPLAYED;
      }
    }
    DirectionKeys keys = keysForEpoch.apply(epoch);
    if (keys == null || keys.isClosed()) {
      return OpenResult.UNKNOWN_EPOCH;
    }
    NativeGcm gcm = ciphers.gcm(length);
    if (gcm != null) {
      return openNative(gcm, source, offset, binding, remoteOffset, plaintext, keys, window);
    }
    byte[] record = workspace.record();
    // The record is copied out of the region before the tag is checked: the peer can write into
    // its granted range at any time, and an AEAD that read the region twice (GHASH, then CTR, or
    // a provider's own buffering) could verify one ciphertext and decrypt another. The copy is
    // what makes the verified bytes the opened bytes; it stays, whatever it costs per byte.
    source.get(
        offset + RecordFlyweight.HEADER_LENGTH,
        record,
        RecordFlyweight.HEADER_LENGTH,
        length + RecordFlyweight.TAG_LENGTH);
    int aadLength = RecordSealer.associatedData(aad, head, binding, remoteOffset);
    keys.writeNonce(sequence, nonce, 0);
    Cipher cipher = ciphers.cipher(length);
    // Heap destination: decrypted straight into its array (the JDK checks the tag before it
    // writes any plaintext; whatever a provider wrote before a bad tag is cleared here). Else via
    // our own array.
    boolean direct = plaintext.hasArray();
    if (!direct && workspace.plain == null) {
      workspace.plain = new byte[workspace.maxPayload];
    }
    byte[] to = direct ? plaintext.array() : workspace.plain;
    int toOffset = direct ? plaintext.arrayOffset() + plaintext.position() : 0;
    try {
      cipher.init(Cipher.DECRYPT_MODE, keys.aesKey(), new GCMParameterSpec(128, nonce));
      cipher.updateAAD(aad, 0, aadLength);
      cipher.doFinal(
          record, RecordFlyweight.HEADER_LENGTH, length + RecordFlyweight.TAG_LENGTH, to, toOffset);
    } catch (AEADBadTagException e) {
      Arrays.fill(to, toOffset, toOffset + length, (byte) 0);
      return OpenResult.AUTH_FAILED;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to open", e);
    }
    if (replayProtection) {
      commitWindow(epoch, window).mark(sequence);
    }
    if (direct) {
      plaintext.position(plaintext.position() + length);
    } else {
      plaintext.put(workspace.plain, 0, length);
      if (workspace.shared) {
        Arrays.fill(workspace.plain, 0, length, (byte) 0); // no session's plaintext for the next
      }
    }
    lastLength = length;
    lastSequence = sequence;
    lastEpoch = epoch;
    return OpenResult.OK;
  }

  /**
   * The rest of {@link #open} with a native library: the record is copied once out of the region
   * into the context's native memory (the same guard as {@link #open}'s array copy) and opened from
   * there straight into a direct plaintext buffer.
   */
  private OpenResult openNative(
      NativeGcm gcm,
      ByteBuffer source,
      int offset,
      RecordBinding binding,
      long remoteOffset,
      ByteBuffer plaintext,
      DirectionKeys keys,
      ReplayWindow window) {
    int length = header.length();
    int epoch = header.epoch();
    long sequence = header.sequence();
    int aadLength = RecordSealer.associatedData(aad, workspace.head, binding, remoteOffset);
    keys.writeNonce(sequence, nonce, 0);
    int at = plaintext.position();
    if (!gcm.open(
        keys.aesKey(),
        nonce,
        aad,
        aadLength,
        source,
        offset + RecordFlyweight.HEADER_LENGTH,
        length,
        plaintext,
        at)) {
      return OpenResult.AUTH_FAILED;
    }
    if (replayProtection) {
      commitWindow(epoch, window).mark(sequence);
    }
    plaintext.position(at + length);
    lastLength = length;
    lastSequence = sequence;
    lastEpoch = epoch;
    return OpenResult.OK;
  }

  /** Plaintext length of the last record opened. */
  public int lastLength() {
    return lastLength;
  }

  /** Sequence of the last record opened. */
  public long lastSequence() {
    return lastSequence;
  }

  /** Epoch of the last record opened. */
  public int lastEpoch() {
    return lastEpoch;
  }

  /** Total bytes a record of the last one's size occupied. */
  public int lastRecordLength() {
    return lastLength + RecordSealer.OVERHEAD;
  }

  /** The window of {@code epoch}: current, previous, a fresh one for a newer epoch, else null. */
  private ReplayWindow windowFor(int epoch) {
    if (epoch == currentEpoch) {
      return current;
    }
    if (epoch == previousEpoch) {
      return previous;
    }
    if (epoch > currentEpoch) {
      return new ReplayWindow();
    }
    if (epoch == currentEpoch - 1 && previousEpoch < epoch) {
      // The epoch before the current one, of which no record opened yet: it never had a window.
      previous = new ReplayWindow();
      previousEpoch = epoch;
      return previous;
    }
    return null;
  }

  /** Makes a newer epoch's window current once one of its records proved authentic. */
  private ReplayWindow commitWindow(int epoch, ReplayWindow window) {
    if (epoch > currentEpoch) {
      previous = current;
      previousEpoch = currentEpoch;
      current = window;
      currentEpoch = epoch;
    }
    return window;
  }
}
