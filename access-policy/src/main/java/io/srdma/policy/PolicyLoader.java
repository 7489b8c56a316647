package io.srdma.policy;

import io.srdma.keys.BoundedFileOpen;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Consumer;

/**
 * Loads and validates policy files. A file with any error is rejected as a whole with a {@link
 * PolicyRejectedException} that lists every error as {@code file:line:column: reason}. Text is read
 * through {@link BoundedYaml}: hostile input (deep nesting, alias bombs, huge or odd text) is
 * refused with one clear error, never a stack overflow or an exhausted heap.
 *
 * <p>Thread-safe and stateless; one instance may serve every load.
 */
public final class PolicyLoader {
  /** Largest policy file accepted by default: 8 MiB. */
  public static final long DEFAULT_MAX_FILE_BYTES = 8L << 20;

  /** Classpath location of the documented two-tenant sample policy ({@code docs/policy.md}). */
  public static final String SAMPLE_RESOURCE = "/io/srdma/policy/sample-policy.yaml";

  /** The name of the threads that open policy files. */
  static final String OPEN_THREAD_NAME = "srdma-policy-open";

  /** For tests: runs after the file's check and before its open. Null in production. */
  static volatile Consumer<Path> beforeOpen;

  private static final BoundedFileOpen OPEN =
      new BoundedFileOpen(
          OPEN_THREAD_NAME,
          BoundedFileOpen.Refusals.worded(PolicyLoader::refused),
          () -> beforeOpen,
          () -> null);

  private final long maxFileBytes;

  /** A loader with the {@link #DEFAULT_MAX_FILE_BYTES default size limit}. */
  public PolicyLoader() {
    this(DEFAULT_MAX_FILE_BYTES);
  }

  /**
   * A loader with a size limit.
   *
   * @param maxFileBytes the largest file accepted, positive
   */
  public PolicyLoader(long maxFileBytes) {
    if (maxFileBytes <= 0 || maxFileBytes > Integer.MAX_VALUE) {
      throw new PolicyException(
          PolicyException.Category.ILLEGAL_ARGUMENT, "maxFileBytes out of range: " + maxFileBytes);
    }
    this.maxFileBytes = maxFileBytes;
  }

  /**
   * Loads a policy file.
   *
   * @param file the YAML file
   * @return the validated policy
   * @throws PolicyRejectedException if the file has errors
   * @throws PolicyException category IO if it cannot be read
   */
  public Policy load(Path file) {
    return parse(file.toString(), read(file));
  }

  /**
   * Reads a policy file's bytes as {@link #load} does, without parsing them: for whoever needs the
   * text of a file again (the console's copy after a reload), so that it is read within the same
   * bounds. A device, a pipe or a file over the limit (or one that grows past it while it is read)
   * is refused without being read whole.
   *
   * <p>The file is opened by {@link BoundedFileOpen}, as the serve configuration is: a link is
   * followed (Kubernetes mounts a ConfigMap's files through links), but its target must be a
   * regular file; the open runs on a daemon thread {@code srdma-policy-open}, waited for at most
   * {@link BoundedFileOpen#LIMIT} and given up as soon as the path holds something else, so a FIFO
   * put there never hangs a reload or the host's start; and a file swapped between the check and
   * the open is refused unused.
   *
   * @param file the policy file
   * @return its bytes, at most the limit
   * @throws PolicyRejectedException if it is not a regular file, was swapped while it was opened,
   *     or is over the limit: one error {@code FILE:1:1: reason} naming what was found (and the
   *     limit), {@link PolicyRejectedException#limitExceeded()} true
   * @throws PolicyException category IO if it does not exist or cannot be read
   */
  public byte[] read(Path file) {
    String label = file.toString();
    try (FileChannel ch = OPEN.read(file, BoundedFileOpen.Links.FOLLOW, null);
        InputStream in = Channels.newInputStream(ch)) {
      // the size of the file opened, not of whatever the path names now
      long size = ch.size();
      if (size > maxFileBytes) {
        throw tooLarge(label, size);
      }
      // the file may grow between the size check and the read: never read past the limit
      byte[] bytes = in.readNBytes((int) maxFileBytes + (maxFileBytes < Integer.MAX_VALUE ? 1 : 0));
      if (bytes.length > maxFileBytes) {
        throw tooLarge(label, bytes.length);
      }
      return bytes;
    } catch (IOException e) {
      throw new PolicyException(
          PolicyException.Category.IO, "cannot read policy file " + file + ": " + e, e);
    }
  }

  /** A refusal of the file by {@link BoundedFileOpen}: one error naming it and what was found. */
  private static PolicyRejectedException refused(Path file, String what, Throwable cause) {
    PolicyRejectedException e =
        new PolicyRejectedException(List.of(new PolicyError(file.toString(), 1, 1, what)), true);
    if (cause != null) {
      e.initCause(cause);
    }
    return e;
  }

  /**
   * Parses policy text.
   *
   * @param label the name used in error positions
   * @param utf8 the file content
   * @return the validated policy
   * @throws PolicyRejectedException if the text has errors
   */
  public Policy parse(String label, byte[] utf8) {
    if (utf8.length > maxFileBytes) {
      throw tooLarge(label, utf8.length);
    }
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(utf8))
              .toString();
    } catch (CharacterCodingException e) {
      throw new PolicyRejectedException(
          List.of(new PolicyError(label, 1, 1, "the file is not valid UTF-8")), true);
    }
    try {
      return new PolicyReader(label).read(text, sha256(utf8), (int) maxFileBytes);
    } catch (StackOverflowError e) {
      // BoundedYaml's depth limit makes this unreachable; kept so that no text can ever take
      // down a caller's thread (the policy watcher, a console worker) if that changes
      throw new PolicyRejectedException(
          List.of(new PolicyError(label, 1, 1, "the file is nested too deeply to read")), true);
    }
  }

  /**
   * Parses policy text.
   *
   * @param label the name used in error positions
   * @param text the YAML text
   * @return the validated policy
   * @throws PolicyRejectedException if the text has errors
   */
  public Policy parse(String label, String text) {
    return parse(label, text.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Loads the documented sample policy (tenants {@code acme} and {@code globex}, demo console
   * users). For demos and tests only: its console passwords are published.
   *
   * @return the sample policy
   */
  public Policy loadSample() {
    try (var in = PolicyLoader.class.getResourceAsStream(SAMPLE_RESOURCE)) {
      if (in == null) {
        throw new PolicyException(PolicyException.Category.IO, "missing " + SAMPLE_RESOURCE);
      }
      return parse("sample-policy.yaml", in.readAllBytes());
    } catch (IOException e) {
      throw new PolicyException(PolicyException.Category.IO, "cannot read " + SAMPLE_RESOURCE, e);
    }
  }

  private PolicyRejectedException tooLarge(String label, long size) {
    return new PolicyRejectedException(
        List.of(
            new PolicyError(
                label,
                1,
                1,
                "the file is " + size + " bytes, over the limit of " + maxFileBytes + " bytes")),
        true);
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
