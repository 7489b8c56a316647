package io.srdma.keys;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Opens an existing file of the CA directory or a PEM file (a private key included) first and then
 * checks what was opened ({@link BoundedFileOpen}), so that a file swapped between a check and an
 * open is not used. Whoever can write the directory can put a FIFO there (opening it to read blocks
 * until a writer comes: the CA commands or a host's start would hang), a link (the key or the line
 * appended would be another file's), or another file.
 *
 * <p>A path that is not a regular file at the check is {@link KeyExchangeException.Reason#IO_ERROR}
 * ({@code ... is not a regular file}); one swapped after it, or whose open blocked, is {@link
 * KeyExchangeException.Reason#FILE_REPLACED}; both name the file, and the channel is closed.
 * Thread-safe; stateless but for the test hooks.
 */
final class CheckedOpen {
  /** The name of the threads that open. */
  static final String THREAD_NAME = "srdma-key-file-open";

  /** For tests: runs after the check and before the open, with the path. Null in production. */
  static volatile Consumer<Path> beforeOpen;

  /** For tests: runs after the open and before the checks of what was opened. */
  static volatile Consumer<Path> afterOpen;

  private static final BoundedFileOpen OPEN =
      new BoundedFileOpen(THREAD_NAME, new Refusals(), () -> beforeOpen, () -> afterOpen);

  private CheckedOpen() {}

  /**
   * The attributes of {@code file} if it is a regular file.
   *
   * @param mayBeAbsent whether nothing there passes (null is returned)
   * @throws KeyExchangeException {@code IO_ERROR} if it is not a regular file
   * @throws NoSuchFileException if it does not exist and {@code mayBeAbsent} is false
   */
  static BasicFileAttributes regular(Path file, BoundedFileOpen.Links links, boolean mayBeAbsent)
      throws IOException {
    return OPEN.regular(file, links, mayBeAbsent);
  }

  /**
   * Opens an existing regular file to read: the one {@code checked} describes.
   *
   * @param checked its attributes as the caller read them (with the same {@code links}) and judged
   *     on, or null to read them here; they must be a regular file's
   * @throws KeyExchangeException if it is not one, or not that one, or the open blocked
   * @throws NoSuchFileException if there is nothing there
   */
  static FileChannel read(Path file, BoundedFileOpen.Links links, BasicFileAttributes checked)
      throws IOException {
    return OPEN.read(file, links, checked);
  }

  /**
   * Opens an existing regular file, not followed if a link, to read and write: read-write so that
   * even without the bounded wait a FIFO cannot block it. The caller positions it.
   *
   * @throws KeyExchangeException if it is not a regular file, or was swapped
   * @throws NoSuchFileException if there is nothing there
   */
  static FileChannel readWrite(Path file) throws IOException {
    return OPEN.readWrite(file, null);
  }

  /**
   * Opens {@code file}, not followed if a link, to read and write, creating it with {@code
   * attributes} if nothing is there (exclusively), else opened as {@link #readWrite}.
   */
  static BoundedFileOpen.Created createOrOpen(Path file, FileAttribute<?>... attributes)
      throws IOException {
    return OPEN.createOrOpen(file, attributes);
  }

  /** key-exchange's errors: {@code IO_ERROR} at the check, {@code FILE_REPLACED} after it. */
  private static final class Refusals implements BoundedFileOpen.Refusals {
    @Override
    public RuntimeException notRegular(Path file, BasicFileAttributes a) {
      return new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR,
          file
              + " is not a regular file ("
              + BoundedFileOpen.describe(a)
              + (a.isSymbolicLink() ? ", not followed here" : "")
              + "); refused");
    }

    @Override
    public RuntimeException replaced(Path file, String what, Throwable cause) {
      return new KeyExchangeException(
          KeyExchangeException.Reason.FILE_REPLACED,
          file
              + " changed between its check and its open ("
              + what
              + "): put there by someone who can write its directory; refused unused (look at the"
              + " directory)",
          cause);
    }

    @Override
    public RuntimeException blocked(Path file, Duration waited) {
      return new KeyExchangeException(
          KeyExchangeException.Reason.FILE_REPLACED,
          file
              + ": its open blocked (given up after "
              + waited.toMillis()
              + " ms): a FIFO put in place of the regular file checked, by someone who can write"
              + " its directory?; refused unused");
    }

    @Override
    public RuntimeException interrupted(Path file) {
      return new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "interrupted while opening " + file);
    }
  }
}
