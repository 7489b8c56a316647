package io.srdma.policy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The exclusive OS lock on {@link AuditLog#lockFile}: one writer per log. {@link
 * FileChannel#tryLock} is per process (POSIX record locks), so writers within this JVM are kept
 * apart by {@link #HELD} first: that check opens no file, because closing any descriptor of the
 * lock file would drop the lock this process holds on it.
 */
final class AuditWriterLock {
  private static final Logger LOG = LoggerFactory.getLogger(AuditWriterLock.class);

  /** The lock files this process holds, by real path. */
  private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

  private final Path held;
  private final FileChannel channel;
  private final FileLock osLock;
  private boolean released;

  private AuditWriterLock(Path held, FileChannel channel, FileLock osLock) {
    this.held = held;
    this.channel = channel;
    this.osLock = osLock;
  }

  static AuditWriterLock acquire(Path log) {
    Path lockFile = AuditLog.lockFile(log);
    Path held;
    try {
      held = lockFile.getParent().toRealPath().resolve(lockFile.getFileName());
    } catch (IOException e) {
      throw new AuditException("cannot open audit log " + log + ": " + e, e);
    }
    if (!HELD.add(held)) {
      throw new AuditLogLockedException(log, lockFile, "another audit log in this process");
    }
    FileChannel ch = null;
    try {
      ch = AuditFiles.openLock(lockFile);
      FileLock l;
      try {
        l = ch.tryLock();
      } catch (OverlappingFileLockException e) {
        throw new AuditLogLockedException(log, lockFile, "this process (another channel)");
      }
      if (l == null) {
        throw new AuditLogLockedException(log, lockFile, holder(ch));
      }
      // for people and for the next opener's message: who holds it
      ch.truncate(0);
      ByteBuffer pid =
          ByteBuffer.wrap(
              (ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII));
      for (long at = 0; pid.hasRemaining(); ) {
        at += ch.write(pid, at);
      }
      return new AuditWriterLock(held, ch, l);
    } catch (IOException | RuntimeException e) {
      if (ch != null) {
        try {
          ch.close();
        } catch (IOException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      HELD.remove(held);
      if (e instanceof RuntimeException r) {
        throw r;
      }
      throw new AuditException("cannot lock audit log " + log + " (" + lockFile + "): " + e, e);
    }
  }

  /**
   * "another process (pid N)" from the lock file the holder wrote, best effort; read through the
   * channel already open: opening the file again could meet a FIFO put in its place, and block.
   */
  private static String holder(FileChannel c) {
    try {
      ByteBuffer b = ByteBuffer.allocate(24);
      c.read(b, 0);
      String pid = new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII).strip();
      if (pid.matches("[0-9]{1,19}")) {
        return "another process (pid " + pid + ")";
      }
    } catch (IOException e) {
      // the message does without the pid
    }
    return "another process";
  }

  /** Releases the lock and closes the lock file; idempotent, never throws. */
  synchronized void release() {
    if (released) {
      return;
    }
    released = true;
    try {
      osLock.release();
    } catch (IOException | RuntimeException e) {
      LOG.warn("cannot release the audit log lock {}: {}", held, e.toString());
    }
    try {
      channel.close();
    } catch (IOException e) {
      LOG.warn("cannot close the audit log lock {}: {}", held, e.toString());
    } finally {
      HELD.remove(held);
    }
  }
}
