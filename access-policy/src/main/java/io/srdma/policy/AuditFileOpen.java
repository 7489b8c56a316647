package io.srdma.policy;

import io.srdma.keys.BoundedFileOpen;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Opens an existing audit file first and then checks what was opened, through key-exchange's {@link
 * BoundedFileOpen} (the check, the open on a named daemon thread waited for at most {@link
 * BoundedFileOpen#LIMIT}, the seek and the same-file check): a file swapped between a check and an
 * open is not used, and a FIFO put there must not hang the host's start nor {@code audit verify}.
 *
 * <p>Any failure is an {@link AuditFileRefusedException} naming the file and the channel is closed.
 * What this cannot see: a regular file swapped in and back out between the open and the second look
 * (the chain's MACs, not the file's identity, guard what is read). Thread-safe; stateless but for
 * the test hooks.
 */
final class AuditFileOpen {
  /** For tests: runs after the check and before the open, with the path. Null in production. */
  static volatile Consumer<Path> beforeOpen;

  /** For tests: runs after the open and before the checks of what was opened. */
  static volatile Consumer<Path> afterOpen;

  private static final BoundedFileOpen OPEN =
      new BoundedFileOpen("srdma-audit-open", new Refusals(), () -> beforeOpen, () -> afterOpen);

  private AuditFileOpen() {}

  /**
   * Opens an existing regular file to read.
   *
   * @throws AuditFileRefusedException if it is not one, or was swapped, or the open blocked
   * @throws NoSuchFileException if there is nothing there
   */
  static FileChannel read(Path file, BoundedFileOpen.Links links) throws IOException {
    return OPEN.read(file, links, null);
  }

  /**
   * Opens an existing regular file to read: the one {@code checked} describes.
   *
   * @param checked its attributes as the caller checked them (and judged on), or null to read them
   *     here
   * @throws AuditFileRefusedException if it is not one, or not that one, or the open blocked
   */
  static FileChannel read(Path file, BoundedFileOpen.Links links, BasicFileAttributes checked)
      throws IOException {
    return OPEN.read(file, links, checked);
  }

  /**
   * Opens an existing regular file, not followed if a link, to read and write; read-write so that
   * even without the bounded wait a FIFO cannot block it. The caller positions it.
   *
   * @param checked its attributes as the caller checked them (and judged on), or null to read them
   *     here; the file opened must be the one they describe
   */
  static FileChannel readWrite(Path file, BasicFileAttributes checked) throws IOException {
    return OPEN.readWrite(file, checked);
  }

  /**
   * Opens {@code file}, not followed if a link, to read and write, creating it with {@code
   * attributes} if nothing is there: created exclusively ({@code O_EXCL}, which opens nothing that
   * exists, a FIFO or a link included), else opened as {@link #readWrite}.
   *
   * @return the channel; {@link BoundedFileOpen.Created#created} says whether this open created the
   *     file
   */
  static BoundedFileOpen.Created createOrOpen(Path file, FileAttribute<?>... attributes)
      throws IOException {
    return OPEN.createOrOpen(file, attributes);
  }

  /**
   * The attributes of {@code file} if it is a regular file.
   *
   * @param mayBeAbsent whether nothing there passes (null is returned)
   * @throws AuditFileRefusedException if it is not a regular file
   * @throws NoSuchFileException if it does not exist and {@code mayBeAbsent} is false
   */
  static BasicFileAttributes regular(Path file, BoundedFileOpen.Links links, boolean mayBeAbsent)
      throws IOException {
    return OPEN.regular(file, links, mayBeAbsent);
  }

  /** The audit files' errors: {@link AuditFileRefusedException} with its reason. */
  private static final class Refusals implements BoundedFileOpen.Refusals {
    @Override
    public RuntimeException notRegular(Path file, BasicFileAttributes a) {
      return a.isSymbolicLink()
          ? AuditFileRefusedException.link(file)
          : AuditFileRefusedException.notRegular(file, BoundedFileOpen.describe(a));
    }

    @Override
    public RuntimeException replaced(Path file, String what, Throwable cause) {
      return AuditFileRefusedException.replaced(file, what, cause);
    }

    @Override
    public RuntimeException blocked(Path file, Duration waited) {
      return AuditFileRefusedException.blocked(file, waited);
    }

    @Override
    public RuntimeException interrupted(Path file) {
      return new AuditException("interrupted while opening " + file, null);
    }
  }
}
