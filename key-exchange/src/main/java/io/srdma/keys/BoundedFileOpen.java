package io.srdma.keys;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.time.Duration;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens an existing file first and then checks what was opened, so that a file swapped between a
 * check and an open is not used and a FIFO put there does not block for ever. Whoever can write the
 * directory can put a FIFO there (opening it to read blocks until a writer comes), a link, or
 * another file. Java has no {@code fstat} of a channel nor {@code O_NONBLOCK}, so
 *
 * <ol>
 *   <li>the path's attributes are read (a link followed or not, as asked): it must be a regular
 *       file;
 *   <li>it is opened ({@code O_NOFOLLOW} where links are refused) on a named daemon thread, waited
 *       for at most {@link #LIMIT} and given up as soon as the path holds anything but a regular
 *       file;
 *   <li>the channel must be seekable (a FIFO or a socket is not: {@code lseek} fails), and the
 *       path's attributes read again must still be those of a regular file with the same {@link
 *       BasicFileAttributes#fileKey() file key} (device and inode) as at the check.
 * </ol>
 *
 * <p>Every refusal is built by the caller's {@link Refusals}, so that each module keeps its own
 * typed errors; the channel is then closed. A given-up open on a FIFO is released by opening the
 * FIFO read-write here (which never blocks, and counts as its writer), so that its thread closes
 * what it got and ends. What this cannot see: a regular file swapped in and back out between the
 * open and the second look.
 *
 * <p>Used by key-exchange for the CA's and PEM files, by access-policy for the audit files, and by
 * the readers of the files an operator points the product at (the serve and cluster configuration,
 * the policy file that {@code policy check}, the host's start and reloads and {@code policy push}
 * read), which follow links ({@link Links#FOLLOW}: Kubernetes mounts a ConfigMap's files through
 * links) and refuse only a target that is not a regular file, and a swap. Instances are immutable
 * and thread-safe: any number of threads may open through one at once.
 */
public final class BoundedFileOpen {
  private static final Logger LOG = LoggerFactory.getLogger(BoundedFileOpen.class);

  /** The longest an open may take: a local file opens in microseconds. */
  public static final Duration LIMIT = Duration.ofSeconds(10);

  /** How often a pending open looks whether the path still holds a regular file. */
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  /** How long a stuck open is given to complete once its FIFO has been opened here. */
  private static final long RELEASE_MILLIS = 2_000;

  private static final int S_IFMT = 0170000;
  private static final int S_IFIFO = 0010000;

  /** Whether a symbolic link at the path is followed. */
  public enum Links {
    /** Followed: files an operator (or a secret or config mount) may link; the target is judged. */
    FOLLOW,
    /** Refused ({@code O_NOFOLLOW}): files the product itself creates in its directories. */
    REFUSE;

    /** The options that read a path's attributes this way. */
    public LinkOption[] options() {
      return this == FOLLOW ? new LinkOption[0] : new LinkOption[] {LinkOption.NOFOLLOW_LINKS};
    }
  }

  /** A channel and whether its file was created by the open. */
  public record Created(FileChannel channel, boolean created) {}

  /**
   * Builds the caller's typed errors, each naming the file. Implementations must be thread-safe
   * (they are called from any thread that opens).
   */
  public interface Refusals {
    /**
     * The path was not a regular file at the check.
     *
     * @param found its attributes, read with the {@link Links} asked (see {@link #describe})
     */
    RuntimeException notRegular(Path file, BasicFileAttributes found);

    /**
     * The path changed between its check and its open, or right after.
     *
     * @param what what was found ({@code "it is gone"}, {@code "now a directory"}, ...)
     * @param cause what the open or the check failed with, or null
     */
    RuntimeException replaced(Path file, String what, Throwable cause);

    /** The open did not complete in time: given up after {@code waited}. */
    RuntimeException blocked(Path file, Duration waited);

    /** The opening thread was interrupted while it waited (its interrupt status is set again). */
    RuntimeException interrupted(Path file);

    /**
     * Refusals worded once for files an operator points the product at (configuration files): each
     * refusal is one phrase about the file, e.g. {@code "not a regular file (a FIFO, a socket or a
     * device); refused"}, thrown as {@link Refused} for the caller to report as its own error
     * (naming the file).
     */
    static Refusals worded() {
      return worded((file, what, cause) -> new Refused(what, cause));
    }

    /** As {@link #worded()}, each phrase handed to {@code error}. */
    static Refusals worded(Wording error) {
      Objects.requireNonNull(error, "error");
      return new Refusals() {
        @Override
        public RuntimeException notRegular(Path file, BasicFileAttributes found) {
          return error.refused(file, "not a regular file (" + describe(found) + "); refused", null);
        }

        @Override
        public RuntimeException replaced(Path file, String what, Throwable cause) {
          return error.refused(
              file,
              "changed between its check and its open ("
                  + what
                  + "): put there by someone who can write its directory; refused unused",
              cause);
        }

        @Override
        public RuntimeException blocked(Path file, Duration waited) {
          return error.refused(
              file,
              "its open blocked (given up after "
                  + waited.toMillis()
                  + " ms): a FIFO put there by someone who can write its directory?; refused",
              null);
        }

        @Override
        public RuntimeException interrupted(Path file) {
          return error.refused(file, "interrupted while opening it", null);
        }
      };
    }
  }

  /**
   * A refusal worded by {@link Refusals#worded()}, for callers that collect errors of their own
   * kind (a configuration reader's list, a command's line on stderr): {@link #getMessage()} is the
   * phrase, without the file's name. Meant to be caught where the open is called, never to escape
   * it. No stack trace is filled.
   */
  public static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Refused(String what, Throwable cause) {
      super(what, cause, false, false);
    }
  }

  /** Builds a caller's typed error from one phrase about a file; see {@link Refusals#worded}. */
  @FunctionalInterface
  public interface Wording {
    /**
     * @param what what was wrong, a phrase without the file's name
     * @param cause what the open or the check failed with, or null
     */
    RuntimeException refused(Path file, String what, Throwable cause);
  }

  private static final Supplier<Consumer<Path>> NO_HOOK = () -> null;

  private final String threadName;
  private final Refusals refusals;
  private final Supplier<Consumer<Path>> beforeOpen;
  private final Supplier<Consumer<Path>> afterOpen;

  /**
   * @param threadName the name of the threads that open
   * @param refusals builds the errors
   */
  public BoundedFileOpen(String threadName, Refusals refusals) {
    this(threadName, refusals, NO_HOOK, NO_HOOK);
  }

  /**
   * For tests of races: each supplier is asked at every open for a hook (null: none) run with the
   * path, {@code beforeOpen} after the check and before the open, {@code afterOpen} after the open
   * and before the checks of what was opened.
   */
  public BoundedFileOpen(
      String threadName,
      Refusals refusals,
      Supplier<Consumer<Path>> beforeOpen,
      Supplier<Consumer<Path>> afterOpen) {
    this.threadName = Objects.requireNonNull(threadName, "threadName");
    this.refusals = Objects.requireNonNull(refusals, "refusals");
    this.beforeOpen = Objects.requireNonNull(beforeOpen, "beforeOpen");
    this.afterOpen = Objects.requireNonNull(afterOpen, "afterOpen");
  }

  /** What {@code a} describes, when not a regular file: a link, a directory, or anything else. */
  public static String describe(BasicFileAttributes a) {
    return a.isSymbolicLink()
        ? "a symbolic link"
        : a.isDirectory() ? "a directory" : "a FIFO, a socket or a device";
  }

  /**
   * The attributes of {@code file} if it is a regular file.
   *
   * @param mayBeAbsent whether nothing there passes (null is returned)
   * @throws RuntimeException {@link Refusals#notRegular} if it is not a regular file
   * @throws NoSuchFileException if it does not exist and {@code mayBeAbsent} is false
   */
  public BasicFileAttributes regular(Path file, Links links, boolean mayBeAbsent)
      throws IOException {
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(file, BasicFileAttributes.class, links.options());
    } catch (NoSuchFileException e) {
      if (mayBeAbsent) {
        return null;
      }
      throw e;
    }
    return requireRegular(file, a);
  }

  private BasicFileAttributes requireRegular(Path file, BasicFileAttributes a) {
    if (!a.isRegularFile()) {
      throw refusals.notRegular(file, a);
    }
    return a;
  }

  /**
   * Opens an existing regular file to read: the one {@code checked} describes.
   *
   * @param checked its attributes as the caller read them (with the same {@code links}) and judged
   *     on, or null to read them here; they must be a regular file's
   * @throws RuntimeException one of the {@link Refusals} if it is not one, or not that one, or the
   *     open blocked
   * @throws NoSuchFileException if there is nothing there
   */
  public FileChannel read(Path file, Links links, BasicFileAttributes checked) throws IOException {
    return opened(
        file,
        links,
        checked != null ? requireRegular(file, checked) : regular(file, links, false),
        Set.of(StandardOpenOption.READ));
  }

  /**
   * Opens an existing regular file, not followed if a link, to read and write: read-write so that
   * even without the bounded wait a FIFO cannot block it (opening one write-only blocks until a
   * reader comes). The caller positions it.
   *
   * @param checked as for {@link #read}
   * @throws RuntimeException one of the {@link Refusals} if it is not a regular file, or was
   *     swapped
   * @throws NoSuchFileException if there is nothing there
   */
  public FileChannel readWrite(Path file, BasicFileAttributes checked) throws IOException {
    return opened(
        file,
        Links.REFUSE,
        checked != null ? requireRegular(file, checked) : regular(file, Links.REFUSE, false),
        Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE));
  }

  /**
   * Opens {@code file}, not followed if a link, to read and write, creating it with {@code
   * attributes} if nothing is there: created exclusively ({@code O_EXCL}, which opens nothing that
   * exists, a FIFO or a link included), else opened as {@link #readWrite}.
   */
  public Created createOrOpen(Path file, FileAttribute<?>... attributes) throws IOException {
    BasicFileAttributes before = regular(file, Links.REFUSE, true);
    if (before == null) {
      try {
        return new Created(
            opened(
                file,
                Links.REFUSE,
                null,
                Set.of(
                    StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.READ,
                    StandardOpenOption.WRITE),
                attributes),
            true);
      } catch (FileAlreadyExistsException e) {
        // created by someone else since the check: judged as any existing file
        before = regular(file, Links.REFUSE, false);
      }
    }
    return new Created(readWrite(file, before), false);
  }

  /** Opens and checks what was opened against {@code before} (null: nothing was there). */
  private FileChannel opened(
      Path file,
      Links links,
      BasicFileAttributes before,
      Set<? extends OpenOption> how,
      FileAttribute<?>... attributes)
      throws IOException {
    Set<OpenOption> options = new HashSet<>(how);
    if (links == Links.REFUSE) {
      options.add(LinkOption.NOFOLLOW_LINKS);
    }
    run(beforeOpen, file);
    FileChannel ch;
    try {
      ch = bounded(file, links, options, attributes);
    } catch (IOException e) {
      // O_NOFOLLOW's ELOOP, a socket's ENXIO, a file gone: say that it was swapped, if it was
      if (before != null || !(e instanceof NoSuchFileException)) {
        swappedOrRethrow(file, links, before, e);
      }
      throw e;
    }
    try {
      run(afterOpen, file);
      try {
        ch.position();
      } catch (IOException e) {
        // lseek fails with ESPIPE on a FIFO or a socket: one was opened, whatever the path says now
        throw refusals.replaced(
            file, "a FIFO or a socket was opened in place of the regular file checked", e);
      }
      requireSame(file, links, before);
      return ch;
    } catch (IOException | RuntimeException e) {
      try {
        ch.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /** Checks that {@code file} is still the regular file {@code checked} describes. */
  private void requireSame(Path file, Links links, BasicFileAttributes checked) throws IOException {
    BasicFileAttributes now;
    try {
      now = Files.readAttributes(file, BasicFileAttributes.class, links.options());
    } catch (NoSuchFileException e) {
      throw refusals.replaced(file, "it is gone", e);
    }
    if (!now.isRegularFile()) {
      throw refusals.replaced(file, "now " + describe(now), null);
    }
    if (checked != null && !Objects.equals(checked.fileKey(), now.fileKey())) {
      throw refusals.replaced(file, "another file than the one checked", null);
    }
  }

  /** After a failed open: a refusal if the path changed since the check, else nothing. */
  private void swappedOrRethrow(Path file, Links links, BasicFileAttributes before, IOException e)
      throws IOException {
    BasicFileAttributes now;
    try {
      now = Files.readAttributes(file, BasicFileAttributes.class, links.options());
    } catch (NoSuchFileException gone) {
      if (before != null) {
        throw refusals.replaced(file, "it is gone", e);
      }
      throw e;
    } catch (IOException other) {
      e.addSuppressed(other);
      throw e;
    }
    if (!now.isRegularFile()) {
      throw refusals.replaced(file, "now " + describe(now), e);
    }
    if (before != null && !Objects.equals(before.fileKey(), now.fileKey())) {
      throw refusals.replaced(file, "another file than the one checked", e);
    }
  }

  /**
   * Opens on a named daemon thread and waits at most {@link #LIMIT}, giving up early when the path
   * holds something other than a regular file. A channel the thread gets after this gave up is
   * closed there.
   */
  private FileChannel bounded(
      Path file, Links links, Set<OpenOption> options, FileAttribute<?>[] attributes)
      throws IOException {
    CompletableFuture<FileChannel> opened = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              FileChannel ch;
              try {
                ch = FileChannel.open(file, options, attributes);
              } catch (Throwable e) {
                opened.completeExceptionally(e);
                return;
              }
              if (!opened.complete(ch)) {
                try {
                  ch.close();
                } catch (IOException e) {
                  LOG.warn("cannot close {}, opened too late: {}", file, e.toString());
                }
              }
            },
            threadName);
    t.setDaemon(true);
    t.start();
    long start = System.nanoTime();
    long deadline = start + LIMIT.toNanos();
    boolean interrupted = false;
    while (true) {
      try {
        return opened.get(
            Math.max(0, Math.min(POLL_NANOS, deadline - System.nanoTime())), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        throw unwrap(e.getCause());
      } catch (InterruptedException e) {
        interrupted = true;
        break;
      } catch (TimeoutException e) {
        if (deadline - System.nanoTime() <= 0 || holdsOther(file, links)) {
          break;
        }
      }
    }
    if (!opened.completeExceptionally(new TimeoutException())) {
      // it completed meanwhile: use what it got
      try {
        return opened.get();
      } catch (ExecutionException e) {
        throw unwrap(e.getCause());
      } catch (InterruptedException e) {
        throw new IllegalStateException("a completed future does not wait", e);
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }
    release(file, links, t);
    if (interrupted) {
      Thread.currentThread().interrupt();
      throw refusals.interrupted(file);
    }
    throw refusals.blocked(file, Duration.ofNanos(System.nanoTime() - start));
  }

  /**
   * Whether something other than a regular file is at the path now. Nothing there is not a reason
   * to give up: a creating open may not have run yet.
   */
  private static boolean holdsOther(Path file, Links links) {
    try {
      return !Files.readAttributes(file, BasicFileAttributes.class, links.options())
          .isRegularFile();
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Lets an open stuck on a FIFO complete, so that its thread closes what it got and ends: opening
   * the FIFO read-write never blocks, and makes this process its writer.
   */
  private static void release(Path file, Links links, Thread stuck) {
    try {
      if (file.getFileSystem().supportedFileAttributeViews().contains("unix")
          && ((Integer) Files.getAttribute(file, "unix:mode", links.options()) & S_IFMT)
              == S_IFIFO) {
        Set<OpenOption> rw =
            new HashSet<>(Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE));
        if (links == Links.REFUSE) {
          rw.add(LinkOption.NOFOLLOW_LINKS);
        }
        try (FileChannel other = FileChannel.open(file, rw)) {
          stuck.join(RELEASE_MILLIS);
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("cannot release the open of {}: {}", file, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (stuck.isAlive()) {
      LOG.warn(
          "thread {} stays blocked opening {} until something opens its other end (or the process"
              + " exits); it holds nothing and closes what it gets",
          stuck.getName(),
          file);
    }
  }

  private static void run(Supplier<Consumer<Path>> hooks, Path file) {
    Consumer<Path> hook = hooks.get();
    if (hook != null) {
      hook.accept(file);
    }
  }

  private static IOException unwrap(Throwable cause) {
    if (cause instanceof IOException io) {
      return io;
    }
    if (cause instanceof RuntimeException r) {
      throw r;
    }
    if (cause instanceof Error err) {
      throw err;
    }
    return new IOException(cause);
  }
}
