package io.srdma.policy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The hash-chained audit log: one JSON line per event, each carrying the SHA-256 of the line before
 * it, so an edited, deleted, reordered or truncated line shows (see {@link AuditVerifier}).
 *
 * <pre>
 * {"seq":7,"prev":"&lt;sha-256 hex of line 6&gt;","time":"2026-11-29T19:34:51.123Z","action":"grant",
 *  "outcome":"allowed","actor":"srdma://acme/trainer-1","tenant":"acme","reason":"ALLOWED",...}
 * </pre>
 *
 * <p>The first line ever has {@code prev} = 64 zeros. When the file would grow past the rotation
 * size it is renamed {@code <file>.<first seq, 12 digits>} and a new file continues the same chain
 * (same sequence, {@code prev} = hash of the last line of the rotated file). Reopening continues
 * the chain from the last line on disk.
 *
 * <p>{@link AuditAction#durable() Grant and revoke} lines are forced to stable storage before
 * {@link #append} returns, so write them before the grant or revoke takes effect. After an I/O
 * failure the log refuses further appends: callers fail closed. Thread-safe.
 */
public final class AuditLog implements AutoCloseable {
  /** Default rotation size: 64 MiB. */
  public static final long DEFAULT_ROTATE_BYTES = 64L << 20;

  static final String GENESIS = "0".repeat(64);
  static final Pattern LINE_HEAD =
      Pattern.compile("^\\{\"seq\":([1-9][0-9]{0,17}),\"prev\":\"([0-9a-f]{64})\",\"time\":\"");
  private static final int TAIL_WINDOW = 1 << 20;

  private final Path file;
  private final long rotateBytes;
  private final Clock clock;
  private final MessageDigest sha256;
  private final ReentrantLock lock = new ReentrantLock();
  private FileChannel channel;
  private long size;
  private long seq;
  private long segmentFirstSeq;
  private String head;
  private boolean closed;
  private boolean failed;

  private AuditLog(Path file, long rotateBytes, Clock clock) {
    this.file = file;
    this.rotateBytes = rotateBytes;
    this.clock = clock;
    this.sha256 = newSha256();
  }

  /**
   * Opens (or creates) a log with the default rotation size and the system clock.
   *
   * @param file the active log file
   * @return the log, continuing the chain found on disk
   */
  public static AuditLog open(Path file) {
    return open(file, DEFAULT_ROTATE_BYTES, Clock.systemUTC());
  }

  /**
   * Opens (or creates) a log.
   *
   * @param file the active log file
   * @param rotateBytes rotate when the file would grow past this many bytes
   * @param clock the clock for line times
   * @return the log, continuing the chain found on disk
   * @throws AuditException if the file cannot be opened or ends with a partial line
   */
  public static AuditLog open(Path file, long rotateBytes, Clock clock) {
    Objects.requireNonNull(file, "file");
    if (rotateBytes < 1024) {
      throw new PolicyException(
          PolicyException.Category.ILLEGAL_ARGUMENT, "rotateBytes below 1024: " + rotateBytes);
    }
    AuditLog log = new AuditLog(file.toAbsolutePath(), rotateBytes, Objects.requireNonNull(clock));
    try {
      log.resume();
    } catch (IOException e) {
      throw new AuditException("cannot open audit log " + file + ": " + e, e);
    }
    return log;
  }

  /**
   * Appends one event. Durable actions are forced to disk before this returns.
   *
   * @param event the event
   * @return the SHA-256 (hex) of the line written: the new head of the chain
   * @throws AuditException if it cannot be written; later appends fail too
   */
  public String append(AuditEvent event) {
    Objects.requireNonNull(event, "event");
    lock.lock();
    try {
      if (closed) {
        throw new PolicyException(PolicyException.Category.CLOSED, "audit log closed: " + file);
      }
      if (failed) {
        throw new AuditException("audit log failed earlier, refusing to append: " + file, null);
      }
      long next = seq + 1;
      StringBuilder b = new StringBuilder(320);
      b.append("{\"seq\":")
          .append(next)
          .append(",\"prev\":\"")
          .append(head)
          .append("\",\"time\":\"");
      b.append(clock.instant()).append('"');
      event.appendFields(b);
      b.append('}');
      byte[] line = b.toString().getBytes(StandardCharsets.US_ASCII);
      try {
        if (size > 0 && size + line.length + 1 > rotateBytes) {
          rotate(next);
        }
        ByteBuffer buf = ByteBuffer.allocate(line.length + 1).put(line).put((byte) '\n').flip();
        while (buf.hasRemaining()) {
          channel.write(buf);
        }
        if (event.action().durable()) {
          channel.force(false);
        }
      } catch (IOException e) {
        failed = true;
        throw new AuditException("cannot write audit log " + file + ": " + e, e);
      }
      size += line.length + 1;
      seq = next;
      head = HexFormat.of().formatHex(sha256.digest(line));
      return head;
    } finally {
      lock.unlock();
    }
  }

  /** The SHA-256 (hex) of the last line written: record it elsewhere to detect tail deletion. */
  public String head() {
    lock.lock();
    try {
      return head;
    } finally {
      lock.unlock();
    }
  }

  /** The sequence number of the last line written; 0 for an empty chain. */
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

  /** Forces what was written to disk and closes the file. Idempotent. */
  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      try (FileChannel c = channel) {
        if (!failed) {
          c.force(true);
        }
      } catch (IOException e) {
        throw new AuditException("cannot close audit log " + file + ": " + e, e);
      }
    } finally {
      lock.unlock();
    }
  }

  private void rotate(long next) throws IOException {
    channel.force(true);
    channel.close();
    Path rotated = segmentName(file, segmentFirstSeq);
    Files.move(file, rotated, StandardCopyOption.ATOMIC_MOVE);
    channel = openActive();
    size = 0;
    segmentFirstSeq = next;
  }

  static Path segmentName(Path file, long firstSeq) {
    return file.resolveSibling(file.getFileName() + "." + String.format("%012d", firstSeq));
  }

  private void resume() throws IOException {
    Path last = null;
    if (Files.exists(file) && Files.size(file) > 0) {
      last = file;
    } else {
      last = latestSegment();
    }
    if (last == null) {
      seq = 0;
      head = GENESIS;
    } else {
      byte[] line = lastLine(last);
      seq = seqOf(line, last);
      head = HexFormat.of().formatHex(sha256.digest(line));
    }
    if (Files.exists(file) && Files.size(file) > 0) {
      size = Files.size(file);
      segmentFirstSeq = seqOf(firstLine(file), file);
    } else {
      size = 0;
      segmentFirstSeq = seq + 1;
    }
    channel = openActive();
  }

  private FileChannel openActive() throws IOException {
    return FileChannel.open(
        file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
  }

  private Path latestSegment() throws IOException {
    Pattern p = Pattern.compile(Pattern.quote(file.getFileName().toString()) + "\\.[0-9]{12}");
    try (Stream<Path> s = Files.list(file.getParent())) {
      return s.filter(x -> p.matcher(x.getFileName().toString()).matches())
          .max(Path::compareTo)
          .orElse(null);
    }
  }

  private static byte[] lastLine(Path f) throws IOException {
    try (FileChannel c = FileChannel.open(f, StandardOpenOption.READ)) {
      long total = c.size();
      int n = (int) Math.min(total, TAIL_WINDOW);
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
      byte[] line = new byte[n - 1 - (start + 1)];
      System.arraycopy(tail, start + 1, line, 0, line.length);
      return line;
    }
  }

  private static byte[] firstLine(Path f) throws IOException {
    try (var in = Files.newInputStream(f)) {
      byte[] buf = in.readNBytes(TAIL_WINDOW);
      int end = 0;
      while (end < buf.length && buf[end] != '\n') {
        end++;
      }
      byte[] line = new byte[end];
      System.arraycopy(buf, 0, line, 0, end);
      return line;
    }
  }

  private static long seqOf(byte[] line, Path f) {
    Matcher m = LINE_HEAD.matcher(new String(line, StandardCharsets.US_ASCII));
    if (!m.find()) {
      throw new AuditException(f + ": last line is not an audit record", null);
    }
    return Long.parseLong(m.group(1));
  }

  static MessageDigest newSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
