package io.srdma.policy;

import io.srdma.keys.BoundedFileOpen;
import io.srdma.keys.OwnerOnlyFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateEncodingException;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.crypto.Mac;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keyed, checkpointed audit log: one JSON line per event, each authenticated by an HMAC-SHA256
 * chain under a key kept outside the log ({@link AuditKey}), with checkpoints signed by the host's
 * certificate key ({@link AuditSigner}). See docs/audit.md and {@link AuditVerifier}.
 *
 * <pre>
 * {"seq":7,"prev":"&lt;mac of line 6&gt;","time":"2026-11-29T19:34:51.123Z","action":"grant",
 *  "outcome":"allowed","actor":"srdma://acme/trainer-1",...,"mac":"&lt;HMAC of this line&gt;"}
 * </pre>
 *
 * <p>Every file starts with a genesis line naming the previous file's last MAC ({@code prev}; 64
 * zeros for the first file ever) and the key's id. With a signer, a checkpoint line is written
 * every {@code checkpointLines} lines, every {@code checkpointInterval} while lines wait, before
 * rotation and at close; it signs the SHA-256 of the file's lines since the previous checkpoint (or
 * the genesis). When the file would grow past the rotation size it is renamed {@code <file>.<first
 * seq, 12 digits>} and a new file continues the chain. Reopening checks the active file with the
 * key and continues it; a file that does not verify is refused.
 *
 * <p>{@link AuditAction#durable() Grant and revoke} lines, genesis and checkpoint lines are forced
 * to stable storage before they count as written. After an I/O failure the log refuses further
 * appends: callers fail closed. Files are created {@code 600}. Thread-safe.
 *
 * <p>One writer per log: {@link #open} takes an exclusive OS lock on {@link #lockFile} before it
 * reads or writes anything and holds it until {@link #close}; a second opener, in this process or
 * another, gets an {@link AuditLogLockedException} and writes nothing (no genesis, no close
 * checkpoint), so it cannot fork the live writer's chain.
 */
public final class AuditLog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AuditLog.class);

  /** Default rotation size: 64 MiB. */
  public static final long DEFAULT_ROTATE_BYTES = 64L << 20;

  static final String GENESIS = "0".repeat(64);

  private final AuditLogOptions options;
  private final Path file;
  private final Clock clock;
  private final AuditKey key;
  private final boolean ownsKey;
  private final Mac mac;
  private final AuditSigner signer;
  private final String certificate;
  private MessageDigest cover = newSha256();
  private final ReentrantLock lock = new ReentrantLock();
  private ScheduledExecutorService timer;
  private FileChannel channel;
  private long size;
  private long seq;
  private long segmentFirstSeq;
  private String head;
  private long coverFrom;
  private long pending;
  private boolean lastIsClose;
  private boolean closed;
  private boolean failed;
  private AuditWriterLock writer;
  private volatile Runnable afterSegmentMoved;

  private AuditLog(AuditLogOptions o, AuditKey key, boolean ownsKey) {
    this.options = o;
    this.file = o.file();
    this.clock = o.clock();
    this.key = key;
    this.ownsKey = ownsKey;
    this.mac = key.newMac();
    this.signer = o.signer();
    try {
      this.certificate =
          signer == null
              ? null
              : Base64.getEncoder().encodeToString(signer.certificate().getEncoded());
    } catch (CertificateEncodingException e) {
      throw new AuditException("cannot encode the checkpoint certificate: " + e, e);
    }
  }

  /**
   * Opens (or creates) a log with the default rotation size, the system clock, the key file beside
   * it ({@link AuditKey#defaultFile}, created if missing) and no checkpoints.
   *
   * @param file the active log file
   * @return the log, continuing the chain found on disk
   */
  public static AuditLog open(Path file) {
    return open(new AuditLogOptions(file));
  }

  /**
   * Opens (or creates) a log with the key file beside it and no checkpoints.
   *
   * @param file the active log file
   * @param rotateBytes rotate when the file would grow past this many bytes
   * @param clock the clock for line times
   * @return the log, continuing the chain found on disk
   * @throws AuditException if the file cannot be opened or does not verify
   */
  public static AuditLog open(Path file, long rotateBytes, Clock clock) {
    return open(new AuditLogOptions(file).rotateBytes(rotateBytes).clock(clock));
  }

  /**
   * Opens (or creates) a log.
   *
   * @param options the file, key, signer, rotation and checkpoint settings
   * @return the log, continuing the chain found on disk
   * @throws AuditLogLockedException if another writer, in this process or another, has the log open
   *     ({@link #lockFile}); nothing was read or written
   * @throws AuditException if the key or the file cannot be opened, or the file does not verify
   *     with the key
   */
  public static AuditLog open(AuditLogOptions options) {
    Objects.requireNonNull(options, "options");
    options.conclude();
    // before anything is read or written, the key included: a second writer must leave no trace
    AuditWriterLock writer = AuditWriterLock.acquire(options.file());
    boolean owns = options.key() == null;
    AuditKey key = null;
    AuditLog log;
    try {
      boolean keyExisted = owns && Files.exists(options.keyFile());
      key = owns ? AuditKey.loadOrCreate(options.keyFile()) : options.key();
      log = new AuditLog(options, key, owns);
      log.writer = writer;
      log.resume(keyExisted);
    } catch (IOException e) {
      if (owns && key != null) {
        key.close();
      }
      writer.release();
      throw new AuditException("cannot open audit log " + options.file() + ": " + e, e);
    } catch (RuntimeException e) {
      if (owns && key != null) {
        key.close();
      }
      writer.release();
      throw e;
    }
    log.startTimer();
    return log;
  }

  /**
   * The lock file that keeps a second writer off a log: beside it, named like the key file with
   * {@code .lock} ({@code audit.lock} for {@code audit.log}, so a shell glob {@code audit.log*}
   * does not pick it up). It is held from {@link #open} to {@link #close} and never deleted.
   *
   * @param file the active log file
   * @return the lock file
   */
  public static Path lockFile(Path file) {
    String name = file.getFileName().toString();
    int dot = name.lastIndexOf('.');
    String stem = dot > 0 ? name.substring(0, dot) : name;
    return file.toAbsolutePath().resolveSibling(stem + ".lock");
  }

  /**
   * Appends one event. Durable actions are forced to disk before this returns.
   *
   * @param event the event; not a genesis or checkpoint, which only the log writes
   * @return the MAC (hex) of the last line now in the log: the new head of the chain
   * @throws AuditException if it cannot be written; later appends fail too
   */
  public String append(AuditEvent event) {
    Objects.requireNonNull(event, "event");
    if (event.action() == AuditAction.GENESIS || event.action() == AuditAction.CHECKPOINT) {
      throw new PolicyException(
          PolicyException.Category.ILLEGAL_ARGUMENT,
          "only the audit log writes " + event.action().token() + " lines");
    }
    lock.lock();
    try {
      checkWritable();
      StringBuilder fields = new StringBuilder(256);
      event.appendFields(fields);
      try {
        String time = clock.instant().toString();
        String line = eventPrefix(time) + fields;
        if (size > 0 && size + line.length() + AuditLine.MAC_SUFFIX + 1 > options.rotateBytes()) {
          rotate();
          line = eventPrefix(time) + fields;
        }
        write(line, event.action().durable());
        if (signer != null && pending >= options.checkpointLines()) {
          checkpoint("interval");
        }
      } catch (AuditException e) {
        failed = true;
        throw e;
      } catch (IOException | RuntimeException e) {
        failed = true;
        throw new AuditException("cannot write audit log " + file + ": " + e, e);
      }
      return head;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Writes a checkpoint now if lines wait for one (a signer is required).
   *
   * @return whether one was written
   */
  public boolean checkpoint() {
    lock.lock();
    try {
      checkWritable();
      if (signer == null || pending == 0) {
        return false;
      }
      try {
        checkpoint("interval");
      } catch (IOException | RuntimeException e) {
        failed = true;
        throw new AuditException("cannot write audit checkpoint " + file + ": " + e, e);
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** The MAC (hex) of the last line written: record it elsewhere to detect tail deletion. */
  public String head() {
    lock.lock();
    try {
      return head;
    } finally {
      lock.unlock();
    }
  }

  /** The sequence number of the last line written (genesis and checkpoint lines count). */
  public long sequence() {
    lock.lock();
    try {
      return seq;
    } finally {
      lock.unlock();
    }
  }

  /** The active file. */
  public Path file() {
    return file;
  }

  /** The id of the audit key (see {@link AuditKey#id()}). */
  public String keyId() {
    return key.id();
  }

  /**
   * Writes the closing checkpoint (with a signer), forces what was written to disk and closes the
   * file. Idempotent.
   */
  @Override
  public void close() {
    ScheduledExecutorService t;
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      t = timer;
      try (FileChannel c = channel) {
        if (!failed) {
          if (signer != null && !lastIsClose) {
            checkpoint("close");
          }
          c.force(true);
        }
      } catch (IOException | RuntimeException e) {
        failed = true;
        throw new AuditException("cannot close audit log " + file + ": " + e, e);
      } finally {
        if (ownsKey) {
          key.close();
        }
        // after the file is closed: the next writer may start only once this one wrote its last
        writer.release();
      }
    } finally {
      lock.unlock();
    }
    if (t != null) {
      t.shutdownNow();
      try {
        if (!t.awaitTermination(5, TimeUnit.SECONDS)) {
          LOG.warn("audit checkpoint thread did not stop within 5 s");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void checkWritable() {
    if (closed) {
      throw new PolicyException(PolicyException.Category.CLOSED, "audit log closed: " + file);
    }
    if (failed) {
      throw new AuditException("audit log failed earlier, refusing to append: " + file, null);
    }
  }

  private String eventPrefix(String time) {
    return "{\"seq\":" + (seq + 1) + ",\"prev\":\"" + head + "\",\"time\":\"" + time + '"';
  }

  /** MACs {@code prefix}, writes the line, and advances the chain. Caller holds the lock. */
  private void write(String prefix, boolean force) throws IOException {
    byte[] p = prefix.getBytes(StandardCharsets.US_ASCII);
    String tag = HexFormat.of().formatHex(mac.doFinal(p));
    byte[] line =
        (prefix + AuditLine.MAC_FIELD + tag + "\"}\n").getBytes(StandardCharsets.US_ASCII);
    ByteBuffer buf = ByteBuffer.wrap(line);
    while (buf.hasRemaining()) {
      channel.write(buf);
    }
    if (force) {
      channel.force(false);
    }
    cover.update(line);
    size += line.length;
    seq++;
    head = tag;
    pending++;
    lastIsClose = false;
  }

  private void genesis(String reason) throws IOException {
    cover.reset();
    coverFrom = seq + 1;
    pending = 0;
    write(
        AuditLine.systemHead(seq + 1, head, clock.instant().toString(), "genesis")
            + reason
            + "\",\"key_id\":\""
            + key.id()
            + '"',
        true);
  }

  private void checkpoint(String reason) throws IOException {
    String body =
        AuditLine.systemHead(seq + 1, head, clock.instant().toString(), "checkpoint")
            + reason
            + "\",\"from\":"
            + coverFrom
            + ",\"lines_sha256\":\""
            + HexFormat.of().formatHex(cover.digest())
            + "\",\"cert\":\""
            + certificate
            + '"';
    byte[] sig = signer.sign(body.getBytes(StandardCharsets.US_ASCII));
    coverFrom = seq + 1;
    write(body + ",\"sig\":\"" + Base64.getEncoder().encodeToString(sig) + '"', true);
    pending = 0;
    lastIsClose = "close".equals(reason);
  }

  private void rotate() throws IOException {
    Path segment = segmentName(file, segmentFirstSeq);
    // No rotated file of this chain has that name (their first seqs differ): anything there was
    // put there. Refused before a byte is written, so that the evidence stays as it was. One put
    // there after this check is replaced by the rename below (rename(2) replaces a link, never
    // follows it): lost, but nothing of ours is written into it.
    if (Files.exists(segment, LinkOption.NOFOLLOW_LINKS)) {
      throw new AuditException(
          "cannot rotate audit log "
              + file
              + ": "
              + segment
              + " already exists, and no rotated file of this log has that name (put there by"
              + " someone who can write the log directory?); the log refuses further appends:"
              + " look at it, move it aside and restart",
          null);
    }
    if (signer != null) {
      checkpoint("rotate");
    }
    channel.force(true);
    channel.close();
    Files.move(file, segment, StandardCopyOption.ATOMIC_MOVE);
    // the rename on disk before the new file: a crash must not lose the rotated file's name (the
    // chain would look cut), and the new file's creation is flushed too (createAppend)
    AuditFiles.syncDirectoryOf(segment);
    Runnable hook = afterSegmentMoved;
    if (hook != null) {
      hook.run();
    }
    try {
      channel = AuditFiles.createAppend(file);
    } catch (FileAlreadyExistsException e) {
      throw new AuditException(
          "cannot rotate audit log "
              + file
              + ": a file appeared in its place after it was renamed to "
              + segment
              + " (put there by someone who can write the log directory?); it was not written to,"
              + " and the log refuses further appends: look at it, move it aside and restart",
          e);
    }
    size = 0;
    segmentFirstSeq = seq + 1;
    genesis("rotated");
  }

  /**
   * For tests: runs between a rotation's rename of the active file and the creation of the next, as
   * someone who can write the log directory may act there. Not for production use.
   */
  void afterSegmentMoved(Runnable hook) {
    afterSegmentMoved = hook;
  }

  static Path segmentName(Path file, long firstSeq) {
    return file.resolveSibling(file.getFileName() + "." + String.format("%012d", firstSeq));
  }

  private void resume(boolean keyExisted) throws IOException {
    // checked, and what is opened below checked against it: nothing swapped in is written to
    BasicFileAttributes seen = AuditFiles.requireRegular(file, true);
    boolean exists = seen != null;
    if (exists && seen.size() > 0) {
      AuditWalk w = AuditWalk.run(key, null, List.of(file), null);
      if (!w.result.intact()) {
        throw new AuditException(
            "cannot continue audit log "
                + file
                + ": "
                + w.result.summary()
                + " (run 'srdma audit verify --key ...' and move the file aside)",
            null);
      }
      seq = w.result.lastSeq();
      head = w.result.head();
      segmentFirstSeq = w.result.firstSeq();
      coverFrom = w.coverFrom;
      pending = w.pending;
      lastIsClose = w.lastIsClose;
      // the walk's running digest: the file's bytes from w.coverOffset on, as the next
      // checkpoint must cover them
      cover = w.cover;
      size = w.lastFileBytes;
      channel = AuditFiles.openExistingAppend(file, seen);
      if (channel.size() != size) {
        // one writer holds the log: another length is another file, read or opened meanwhile
        channel.close();
        throw AuditFileRefusedException.replaced(
            file, "its length changed while it was verified", null);
      }
      return;
    }
    Path last = latestSegment();
    String reason;
    if (last == null) {
      seq = 0;
      head = GENESIS;
      if (keyExisted) {
        // the key outlived its log: files moved away or deleted; say so in the chain itself
        LOG.warn(
            "audit key {} exists but no audit log {}: starting a new chain (earlier files moved"
                + " or deleted?)",
            options.keyFile(),
            file);
        reason = "restarted";
      } else {
        reason = "new";
      }
    } else {
      AuditLine line = AuditLine.parse(lastLine(last));
      if (line == null
          || !line.mac.equals(
              HexFormat.of()
                  .formatHex(mac.doFinal(line.macInput().getBytes(StandardCharsets.ISO_8859_1))))) {
        throw new AuditException(
            last + ": the last line is not an audit record under this key; cannot continue", null);
      }
      seq = line.seq;
      head = line.mac;
      reason = "continued";
    }
    segmentFirstSeq = seq + 1;
    size = 0;
    if (exists) {
      // An empty file is continued: a crash between its creation and its genesis. But one that
      // others may read or write was not created by this log (its files are 600), and whoever
      // planted it could read every line written into it, or edit them.
      Optional<String> loose = OwnerOnlyFiles.looseMode(file);
      if (loose.isPresent()) {
        throw new AuditException(
            "audit log "
                + file
                + " is empty and open to group or others ("
                + loose.get()
                + "), which this log never creates: not written to; remove it (or chmod 600 it)",
            null);
      }
    }
    try {
      // an empty file is continued (a crash before its genesis); a missing one is created, and
      // one that appears in between is not ours
      channel = exists ? AuditFiles.openExistingAppend(file, seen) : AuditFiles.createAppend(file);
    } catch (FileAlreadyExistsException e) {
      throw new AuditException(
          "cannot open audit log "
              + file
              + ": a file appeared there while the log was being opened; it was not written to:"
              + " look at it, move it aside and retry",
          e);
    }
    try {
      genesis(reason);
    } catch (IOException e) {
      channel.close();
      throw e;
    }
  }

  private void startTimer() {
    Duration every = options.checkpointInterval();
    if (signer == null || every.isZero()) {
      return;
    }
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "srdma-audit-checkpoint");
              t.setDaemon(true);
              return t;
            });
    long ms = Math.max(1, every.toMillis());
    timer.scheduleWithFixedDelay(this::tick, ms, ms, TimeUnit.MILLISECONDS);
  }

  private void tick() {
    lock.lock();
    try {
      if (closed || failed || pending == 0) {
        return;
      }
      checkpoint("interval");
    } catch (IOException | RuntimeException e) {
      failed = true;
      LOG.error("audit checkpoint failed; the log refuses further appends: {}", e.toString());
    } finally {
      lock.unlock();
    }
  }

  private Path latestSegment() throws IOException {
    Pattern p = Pattern.compile(Pattern.quote(file.getFileName().toString()) + "\\.[0-9]{12}");
    try (Stream<Path> s = Files.list(file.getParent())) {
      return s.filter(x -> p.matcher(x.getFileName().toString()).matches())
          .max(Path::compareTo)
          .orElse(null);
    }
  }

  private static final int TAIL_WINDOW = 1 << 20;

  private static String lastLine(Path f) throws IOException {
    try (FileChannel c = AuditFileOpen.read(f, BoundedFileOpen.Links.REFUSE)) {
      long total = c.size();
      int n = (int) Math.min(total, TAIL_WINDOW);
      if (n == 0) {
        throw new AuditException(f + " is empty; cannot continue its chain", null);
      }
      ByteBuffer buf = ByteBuffer.allocate(n);
      long pos = total - n;
      while (buf.hasRemaining()) {
        if (c.read(buf, pos + buf.position()) < 0) {
          break;
        }
      }
      byte[] tail = buf.array();
      if (tail[n - 1] != '\n') {
        throw new AuditException(
            f
                + " ends with a partial line (truncated, or a crash mid-write): run 'srdma audit"
                + " verify' and move the file aside before reopening",
            null);
      }
      int start = n - 2;
      while (start >= 0 && tail[start] != '\n') {
        start--;
      }
      if (start < 0 && pos > 0) {
        throw new AuditException(f + ": last line longer than " + TAIL_WINDOW + " bytes", null);
      }
      return new String(tail, start + 1, n - 2 - start, StandardCharsets.ISO_8859_1);
    }
  }

  static MessageDigest newSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
