package io.srdma.policy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

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
   * @param file the policy file
   * @return its bytes, at most the limit
   * @throws PolicyRejectedException if it is not a regular file or is over the limit; the message
   *     names the file (and the limit)
   * @throws PolicyException category IO if it cannot be read
   */
  public byte[] read(Path file) {
    String label = file.toString();
    try {
      if (Files.exists(file) && !Files.isRegularFile(file)) {
        // a device or pipe has no size to check: /dev/zero would be read until the heap is gone
        throw new PolicyRejectedException(
            List.of(new PolicyError(label, 1, 1, "the policy file is not a regular file")), true);
      }
      long size = Files.size(file);
      if (size > maxFileBytes) {
        throw tooLarge(label, size);
      }
      byte[] bytes;
      try (java.io.InputStream in = Files.newInputStream(file)) {
        // the file may grow between the size check and the read: never read past the limit
        bytes = in.readNBytes((int) maxFileBytes + (maxFileBytes < Integer.MAX_VALUE ? 1 : 0));
      }
      if (bytes.length > maxFileBytes) {
        throw tooLarge(label, bytes.length);
      }
      return bytes;
    } catch (IOException e) {
      throw new PolicyException(
          PolicyException.Category.IO, "cannot read policy file " + file + ": " + e, e);
    }
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
