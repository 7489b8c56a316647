package io.srdma.console;

import io.srdma.policy.BoundedYaml;
import io.srdma.policy.PolicyLoader;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * Policy text as users who may not apply a policy (auditors) see it: without console users'
 * password hashes, which are an offline guessing target. Fails closed: text the redaction cannot be
 * shown to have cleaned is withheld as a whole.
 *
 * <ol>
 *   <li>The text is composed with the policy reader's own YAML reader ({@link BoundedYaml}, which
 *       reads JSON too). Every value of a {@code password-hash} key, in whatever form it is written
 *       (quoted or not, quoted key, on the next line, a {@code >-} or {@code |} block, escapes),
 *       and every other scalar that looks like a credential hash, is replaced, from its first to
 *       its last character in the text, by {@value #REDACTED}.
 *   <li>The line regex of old ({@code password-hash: value} on one line) runs as well: the only
 *       step for text that does not compose.
 *   <li>Every occurrence of every hash learned (from the text, and those of the running policy) is
 *       replaced too, wherever it stands (a comment, say).
 *   <li>The result is checked: if it still holds anything that looks like a credential hash ({@code
 *       shiro2}, {@code $2y$}, {@code $argon2}...), a hash learned or a long part of one, or, for
 *       text that composed, no longer composes or still has a {@code password-hash} that is not the
 *       placeholder, the whole text is withheld: {@link #WITHHELD} is shown instead.
 * </ol>
 */
final class PolicyRedaction {
  /** What a hidden {@code password-hash} value reads. */
  static final String REDACTED = "\"<redacted>\"";

  /** What is shown instead of a text whose hashes could not be hidden for sure. */
  static final String WITHHELD =
      "# The policy text is withheld: it holds a console password hash in a form the console\n"
          + "# cannot hide for sure, and a hash is an offline guessing target. An admin sees the\n"
          + "# text; writing every hash on one line (password-hash: \"<hash>\") makes it shown\n"
          + "# with the hashes redacted.\n";

  private static final String KEY = "password-hash";

  /** {@link #REDACTED} as a YAML scalar's value. */
  private static final String PLACEHOLDER = "<redacted>";

  // a password-hash value in block or flow style: quoted, or plain up to a separator
  private static final Pattern LINE =
      Pattern.compile("(password-hash\\s*:[ \\t]*)(\"[^\"\\n]*\"|'[^'\\n]*'|[^\\s,}#]+)");

  /** Shiro 2 crypt format, bcrypt ({@code $2$ $2a$ $2b$ $2x$ $2y$}) and Argon2 prefixes. */
  private static final Pattern HASH_LIKE =
      Pattern.compile("shiro2|\\$2[abxy]?\\$|\\$argon2", Pattern.CASE_INSENSITIVE);

  /** Shorter values are no real hash; replacing each occurrence of them would garble the text. */
  private static final int MIN_VALUE_CHARS = 8;

  /** Parts of a hash (salt, digest) this long are never in a policy by chance. */
  private static final int MIN_PART_CHARS = 12;

  private static final int MAX_CODE_POINTS = (int) PolicyLoader.DEFAULT_MAX_FILE_BYTES;

  /**
   * What was shown.
   *
   * @param text the text with hashes redacted, or {@link #WITHHELD}
   * @param withheld whether the text was withheld
   */
  record Shown(String text, boolean withheld) {}

  private PolicyRedaction() {}

  /**
   * The text without password hashes.
   *
   * @param text policy text, valid or not
   * @param knownHashes hashes to hide wherever they stand, besides those the text holds (the
   *     running policy's)
   * @return the redacted text, or {@link #WITHHELD}
   */
  static Shown redact(String text, Collection<String> knownHashes) {
    Set<String> values = new LinkedHashSet<>(knownHashes);
    Composed c = compose(text);
    String r = text;
    if (c.ok() && c.root() != null) {
      List<int[]> ranges = new ArrayList<>();
      collect(c.root(), false, ranges, values);
      r = replaceRanges(text, ranges);
    }
    values.remove(PLACEHOLDER); // text shown to an auditor before, sent back
    r = LINE.matcher(r).replaceAll("$1" + Matcher.quoteReplacement(REDACTED));
    for (String v : values) {
      if (v.length() >= MIN_VALUE_CHARS) {
        r = r.replace(v, PLACEHOLDER);
      }
    }
    return clean(r, c.ok(), values) ? new Shown(r, false) : new Shown(WITHHELD, true);
  }

  /** Whether the redacted text holds nothing that looks like a hash (step 4). */
  private static boolean clean(String r, boolean composed, Set<String> values) {
    if (HASH_LIKE.matcher(r).find()) {
      return false;
    }
    for (String v : values) {
      if (v.length() >= MIN_VALUE_CHARS && r.contains(v)) {
        return false;
      }
      for (String part : v.split("\\$")) {
        if (part.length() >= MIN_PART_CHARS && r.contains(part)) {
          return false;
        }
      }
    }
    if (!composed) {
      return true;
    }
    Composed again = compose(r);
    return again.ok() && (again.root() == null || stillClean(again.root()));
  }

  /** Every password-hash value is the placeholder, and no scalar looks like a hash. */
  private static boolean stillClean(Node node) {
    if (node instanceof ScalarNode s) {
      return !HASH_LIKE.matcher(s.getValue()).find();
    }
    if (node instanceof SequenceNode q) {
      return q.getValue().stream().allMatch(PolicyRedaction::stillClean);
    }
    if (node instanceof MappingNode m) {
      for (NodeTuple t : m.getValue()) {
        if (isHashKey(t.getKeyNode())
            && !(t.getValueNode() instanceof ScalarNode v
                && (v.getValue().isEmpty() || v.getValue().equals(PLACEHOLDER)))) {
          return false;
        }
        if (!stillClean(t.getKeyNode()) || !stillClean(t.getValueNode())) {
          return false;
        }
      }
      return true;
    }
    return false; // no other kind of node: refuse what is not understood
  }

  /**
   * Collects the text ranges (code point indexes) to hide: each {@code password-hash} value, and
   * each other scalar that looks like a hash; and the scalar values under a {@code password-hash}.
   */
  private static void collect(
      Node node, boolean underHash, List<int[]> ranges, Set<String> values) {
    if (node instanceof ScalarNode s) {
      if (underHash) {
        values.add(s.getValue());
      }
      if (HASH_LIKE.matcher(s.getValue()).find()) {
        values.add(s.getValue());
        range(s, ranges);
      }
    } else if (node instanceof SequenceNode q) {
      for (Node n : q.getValue()) {
        collect(n, underHash, ranges, values);
      }
    } else if (node instanceof MappingNode m) {
      for (NodeTuple t : m.getValue()) {
        collect(t.getKeyNode(), underHash, ranges, values);
        boolean hash = isHashKey(t.getKeyNode());
        if (hash) {
          range(t.getValueNode(), ranges);
        }
        collect(t.getValueNode(), underHash || hash, ranges, values);
      }
    }
  }

  private static boolean isHashKey(Node key) {
    return key instanceof ScalarNode s && s.getValue().strip().toLowerCase(Locale.ROOT).equals(KEY);
  }

  private static void range(Node n, List<int[]> ranges) {
    Mark start = n.getStartMark().orElse(null);
    Mark end = n.getEndMark().orElse(null);
    if (start != null && end != null && end.getIndex() > start.getIndex()) {
      ranges.add(new int[] {start.getIndex(), end.getIndex()});
    }
    // a range not known (empty value): the check afterwards decides
  }

  /**
   * Replaces each range (outermost of nested ones) by {@link #REDACTED}, keeping the whitespace and
   * line breaks it ends with (a block scalar's range runs to the next line).
   */
  private static String replaceRanges(String text, List<int[]> ranges) {
    ranges.sort(Comparator.<int[]>comparingInt(a -> a[0]).thenComparingInt(a -> -a[1]));
    StringBuilder out = new StringBuilder(text.length());
    int copied = 0; // chars
    int cpDone = 0; // code points before `at`
    int at = 0; // chars
    int coveredTo = -1; // code points
    for (int[] r : ranges) {
      if (r[0] < coveredTo) {
        continue; // inside one already replaced
      }
      int s = at = text.offsetByCodePoints(at, r[0] - cpDone);
      cpDone = r[0];
      int e = at = text.offsetByCodePoints(at, r[1] - cpDone);
      cpDone = r[1];
      coveredTo = r[1];
      int keep = e;
      while (keep > s && " \t\r\n".indexOf(text.charAt(keep - 1)) >= 0) {
        keep--;
      }
      out.append(text, copied, s).append(REDACTED).append(text, keep, e);
      copied = e;
    }
    return out.append(text, copied, text.length()).toString();
  }

  /** Whether the text composed, and its root node (null for an empty document). */
  private record Composed(boolean ok, Node root) {}

  private static Composed compose(String text) {
    try {
      return new Composed(true, BoundedYaml.compose("policy", text, MAX_CODE_POINTS));
    } catch (BoundedYaml.RejectedException | RuntimeException e) {
      return new Composed(false, null);
    }
  }
}
