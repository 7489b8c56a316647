package io.srdma.policy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.shiro.crypto.hash.Hash;
import org.apache.shiro.crypto.hash.format.Shiro2CryptFormat;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/** Reads one policy text into a {@link Policy}, collecting every error with its position. */
final class PolicyReader {
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
  private static final Pattern USER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._@-]{0,63}");
  private static final Pattern IDENTITY =
      Pattern.compile("srdma://([a-z0-9][a-z0-9_-]{0,62})/([A-Za-z0-9._*-]{1,128})");
  private static final Pattern PERMISSION = Pattern.compile("[a-z0-9_*,:-]+");
  private static final Pattern INTEGER = Pattern.compile("[0-9]{1,9}");
  private static final Set<String> HASH_ALGORITHMS =
      Set.of("argon2id", "argon2i", "argon2d", "2y", "2a", "2b");

  private static final int MAX_REASON_CHARS = 300;

  private static final List<String> ROOT_KEYS = List.of("version", "tenants", "console");
  private static final List<String> TENANT_KEYS = List.of("regions", "roles", "peers");
  private static final List<String> REGION_KEYS = List.of("size");
  private static final List<String> ROLE_KEYS =
      List.of("permissions", "operations", "max-bytes-per-grant", "max-ttl", "max-live-grants");
  private static final List<String> PEER_KEYS = List.of("identity", "roles");
  private static final List<String> CONSOLE_KEYS = List.of("users");
  private static final List<String> USER_KEYS = List.of("password-hash", "roles");

  private final String source;
  private final List<PolicyError> errors = new ArrayList<>();
  private boolean limitExceeded;

  private record Entry(String key, Node keyNode, Node value) {}

  PolicyReader(String source) {
    this.source = source;
  }

  /** Reads the text, or throws {@link PolicyRejectedException} listing every error. */
  Policy read(String text, String sha256, int maxCodePoints) {
    Node root = compose(text, maxCodePoints);
    List<Tenant> tenants = new ArrayList<>();
    List<ConsoleUser> users = new ArrayList<>();
    if (root != null) {
      readRoot(root, tenants, users);
    }
    if (!errors.isEmpty()) {
      errors.sort(Comparator.comparingInt(PolicyError::line).thenComparingInt(PolicyError::column));
      throw new PolicyRejectedException(errors, limitExceeded);
    }
    return new Policy(source, sha256, tenants, users);
  }

  // BoundedYaml refuses anchors and aliases before composing (an alias bomb is never expanded),
  // and nesting, node count and characters beyond its limits.
  private Node compose(String text, int maxCodePoints) {
    try {
      Node root = BoundedYaml.compose(source, text, maxCodePoints);
      if (root == null) {
        error((Mark) null, "the policy file is empty");
      }
      return root;
    } catch (BoundedYaml.RejectedException e) {
      limitExceeded = e.limitExceeded();
      for (BoundedYaml.Problem p : e.problems()) {
        String reason = p.reason();
        if (reason.startsWith("anchors") || reason.startsWith("aliases")) {
          reason += " in a policy file";
        }
        errors.add(new PolicyError(source, p.line(), p.column(), reason));
      }
      return null;
    }
  }

  private void readRoot(Node root, List<Tenant> tenants, List<ConsoleUser> users) {
    Map<String, Entry> f = fields(root, "the policy", ROOT_KEYS, List.of("version", "tenants"));
    if (f == null) {
      return;
    }
    Entry version = f.get("version");
    if (version != null) {
      Integer v = integer(version.value(), "version");
      if (v != null && v != Policy.FORMAT_VERSION) {
        error(version.value(), "unsupported policy version " + v + " (this build reads version 1)");
      }
    }
    Entry ts = f.get("tenants");
    if (ts != null) {
      List<Entry> es = entries(ts.value(), "tenants");
      if (es != null) {
        for (Entry e : es) {
          if (tenantName(e)) {
            Tenant t = tenant(e.key(), e.value());
            if (t != null) {
              tenants.add(t);
            }
          }
        }
      }
    }
    Entry console = f.get("console");
    if (console != null) {
      Map<String, Entry> c = fields(console.value(), "console", CONSOLE_KEYS, List.of());
      Entry us = c == null ? null : c.get("users");
      List<Entry> es = us == null ? null : entries(us.value(), "console users");
      if (es != null) {
        for (Entry e : es) {
          if (name(e, USER, "console user name")) {
            ConsoleUser u = user(e.key(), e.value());
            if (u != null) {
              users.add(u);
            }
          }
        }
      }
    }
  }

  private Tenant tenant(String tenant, Node node) {
    String what = "tenant '" + tenant + "'";
    Map<String, Entry> f = fields(node, what, TENANT_KEYS, List.of());
    if (f == null) {
      return null;
    }
    int before = errors.size();
    List<Region> regions = new ArrayList<>();
    Entry rs = f.get("regions");
    List<Entry> regionEntries = rs == null ? List.of() : entries(rs.value(), what + " regions");
    Set<String> regionNames = new HashSet<>();
    for (Entry e : regionEntries == null ? List.<Entry>of() : regionEntries) {
      if (!name(e, NAME, "region name")) {
        continue;
      }
      regionNames.add(e.key());
      String rw = "region '" + e.key() + "'";
      Map<String, Entry> rf = fields(e.value(), rw, REGION_KEYS, REGION_KEYS);
      Entry size = rf == null ? null : rf.get("size");
      OptionalLong bytes = size == null ? OptionalLong.empty() : size(size.value(), "size");
      if (bytes.isPresent()) {
        regions.add(new Region(tenant, e.key(), bytes.getAsLong()));
      }
    }
    Map<String, Role> roles = new LinkedHashMap<>();
    Set<String> declaredRoles = new HashSet<>();
    Entry rl = f.get("roles");
    List<Entry> roleEntries = rl == null ? List.of() : entries(rl.value(), what + " roles");
    for (Entry e : roleEntries == null ? List.<Entry>of() : roleEntries) {
      if (name(e, NAME, "role name")) {
        declaredRoles.add(e.key());
        Role role = role(tenant, e.key(), e.value(), regionNames);
        if (role != null) {
          roles.put(e.key(), role);
        }
      }
    }
    List<PeerEntry> peers = new ArrayList<>();
    List<Node> peerNodes = new ArrayList<>();
    Entry ps = f.get("peers");
    List<Node> items = ps == null ? List.of() : sequence(ps.value(), what + " peers");
    for (Node item : items == null ? List.<Node>of() : items) {
      Map<String, Entry> pf = fields(item, "peer", PEER_KEYS, PEER_KEYS);
      if (pf == null || pf.get("identity") == null || pf.get("roles") == null) {
        continue;
      }
      Node idNode = pf.get("identity").value();
      PeerPattern pattern = pattern(tenant, idNode);
      List<Role> granted = peerRoles(tenant, pf.get("roles").value(), roles, declaredRoles);
      if (pattern == null || granted == null) {
        continue;
      }
      for (int i = 0; i < peers.size(); i++) {
        PeerPattern other = peers.get(i).pattern();
        if (other.text().equals(pattern.text())) {
          error(
              idNode,
              "duplicate peer identity '"
                  + pattern
                  + "' (first at line "
                  + line(peerNodes.get(i))
                  + ")");
          break;
        } else if (pattern.isWildcard() && other.isWildcard() && pattern.overlaps(other)) {
          error(
              idNode,
              "ambiguous peer pattern '"
                  + pattern
                  + "': some identity matches both it and '"
                  + other
                  + "' (line "
                  + line(peerNodes.get(i))
                  + ")");
          break;
        }
      }
      peers.add(new PeerEntry(pattern, granted));
      peerNodes.add(idNode);
    }
    if (errors.size() != before) {
      return null;
    }
    return new Tenant(tenant, regions, List.copyOf(roles.values()), peers);
  }

  private Role role(String tenant, String name, Node node, Set<String> regionNames) {
    String what = "role '" + name + "'";
    Map<String, Entry> f = fields(node, what, ROLE_KEYS, ROLE_KEYS);
    if (f == null) {
      return null;
    }
    int before = errors.size();
    List<RolePermission> permissions = new ArrayList<>();
    Entry pe = f.get("permissions");
    List<Node> pn = pe == null ? null : nonEmptySequence(pe.value(), what + " permissions");
    for (Node p : pn == null ? List.<Node>of() : pn) {
      RolePermission rp = permission(tenant, p, regionNames);
      if (rp != null) {
        permissions.add(rp);
      }
    }
    Set<Operation> ops = EnumSet.noneOf(Operation.class);
    Entry oe = f.get("operations");
    List<Node> on = oe == null ? null : nonEmptySequence(oe.value(), what + " operations");
    for (Node o : on == null ? List.<Node>of() : on) {
      String token = string(o, "operation");
      if (token == null) {
        continue;
      }
      var op = Operation.fromToken(token);
      if (op.isEmpty()) {
        error(o, "unknown operation '" + token + "' (expected read or write)");
      } else if (!ops.add(op.get())) {
        error(o, "operation '" + token + "' listed twice");
      }
    }
    Entry mb = f.get("max-bytes-per-grant");
    OptionalLong maxBytes =
        mb == null ? OptionalLong.empty() : size(mb.value(), "max-bytes-per-grant");
    Entry mt = f.get("max-ttl");
    java.time.Duration maxTtl = mt == null ? null : duration(mt.value(), "max-ttl");
    Entry ml = f.get("max-live-grants");
    Integer maxLive = ml == null ? null : integer(ml.value(), "max-live-grants");
    if (maxLive != null && maxLive < 1) {
      error(ml.value(), "max-live-grants must be at least 1");
    }
    if (errors.size() != before || maxBytes.isEmpty() || maxTtl == null || maxLive == null) {
      return null;
    }
    return new Role(tenant, name, permissions, ops, maxBytes.getAsLong(), maxTtl, maxLive);
  }

  // Validates the shape only, so typos fail loudly; matching itself is Shiro's.
  private RolePermission permission(String tenant, Node node, Set<String> regionNames) {
    String text = string(node, "permission");
    if (text == null) {
      return null;
    }
    if (!PERMISSION.matcher(text).matches()) {
      error(node, "permission '" + text + "' may hold only a-z 0-9 _ - * , and :");
      return null;
    }
    String[] parts = text.split(":", -1);
    if (parts.length > 3) {
      error(
          node, "permission '" + text + "' has more than 3 parts (region:<operations>:<regions>)");
      return null;
    }
    List<Set<String>> allowed =
        List.of(Set.of("region", "*"), Set.of("read", "write", "*"), regionNames);
    List<String> partNames = List.of("resource", "operation", "region");
    for (int i = 0; i < parts.length; i++) {
      for (String token : parts[i].split(",", -1)) {
        if (token.isEmpty()) {
          error(node, "permission '" + text + "' has an empty part");
          return null;
        }
        if (!token.equals("*") && !allowed.get(i).contains(token)) {
          String why =
              i == 2
                  ? "names region '" + token + "' that tenant '" + tenant + "' does not declare"
                  : "has unknown " + partNames.get(i) + " '" + token + "'";
          error(node, "permission '" + text + "' " + why);
          return null;
        }
      }
    }
    try {
      return new RolePermission(text, TenantScope.scoped(tenant, text));
    } catch (IllegalArgumentException e) {
      error(
          node, "permission '" + text + "' is not a Shiro wildcard permission: " + e.getMessage());
      return null;
    }
  }

  private PeerPattern pattern(String tenant, Node node) {
    String text = string(node, "peer identity");
    if (text == null) {
      return null;
    }
    Matcher m = IDENTITY.matcher(text);
    if (!m.matches()) {
      error(node, "peer identity '" + text + "' is not srdma://<tenant>/<peer>");
      return null;
    }
    if (!m.group(1).equals(tenant)) {
      error(
          node,
          "peer identity '"
              + text
              + "' names tenant '"
              + m.group(1)
              + "' but is declared under tenant '"
              + tenant
              + "'");
      return null;
    }
    String peer = m.group(2);
    int star = peer.indexOf('*');
    if (star != peer.lastIndexOf('*')) {
      error(node, "peer pattern '" + text + "' may hold at most one '*'");
      return null;
    }
    boolean issuable =
        star < 0
            ? PeerIdentity.isName(peer)
            : PeerIdentity.canMatchName(peer.substring(0, star), peer.substring(star + 1));
    if (!issuable) {
      error(
          node,
          (star < 0 ? "peer identity '" : "peer pattern '")
              + text
              + "' can match no certificate: peer names are "
              + PeerIdentity.NAME_RULE_TEXT);
      return null;
    }
    return PeerPattern.of(text);
  }

  private List<Role> peerRoles(
      String tenant, Node node, Map<String, Role> roles, Set<String> declared) {
    List<Node> items = nonEmptySequence(node, "peer roles");
    if (items == null) {
      return null;
    }
    List<Role> out = new ArrayList<>();
    boolean ok = true;
    for (Node n : items) {
      String r = string(n, "role");
      if (r == null) {
        ok = false;
      } else if (!declared.contains(r)) {
        error(n, "undefined role '" + r + "' (tenant '" + tenant + "' declares no such role)");
        ok = false;
      } else if (roles.containsKey(r)) {
        out.add(roles.get(r));
      } else {
        ok = false; // declared but invalid: already reported
      }
    }
    return ok ? out : null;
  }

  private ConsoleUser user(String name, Node node) {
    Map<String, Entry> f = fields(node, "console user '" + name + "'", USER_KEYS, USER_KEYS);
    if (f == null || f.get("password-hash") == null || f.get("roles") == null) {
      return null;
    }
    int before = errors.size();
    Node hn = f.get("password-hash").value();
    String hash = string(hn, "password-hash");
    // Never echo the value: a mistaken plaintext password must not land in logs.
    if (hash != null && !hash.startsWith(Shiro2CryptFormat.MCF_PREFIX)) {
      error(hn, "password-hash must be a Shiro 2 hash ($shiro2$argon2id$... or $shiro2$2y$...)");
    } else if (hash != null) {
      try {
        Hash parsed = new Shiro2CryptFormat().parse(hash);
        if (!HASH_ALGORITHMS.contains(parsed.getAlgorithmName())) {
          error(hn, "password-hash algorithm must be argon2 or bcrypt");
        }
      } catch (RuntimeException e) {
        error(hn, "password-hash is not a valid Shiro 2 argon2 or bcrypt hash");
      }
    }
    Set<ConsoleRole> roles = EnumSet.noneOf(ConsoleRole.class);
    List<Node> rn = nonEmptySequence(f.get("roles").value(), "console user roles");
    for (Node n : rn == null ? List.<Node>of() : rn) {
      String r = string(n, "console role");
      if (r != null) {
        var role = ConsoleRole.fromToken(r);
        if (role.isEmpty()) {
          error(n, "unknown console role '" + r + "' (expected admin or auditor)");
        } else {
          roles.add(role.get());
        }
      }
    }
    if (errors.size() != before || rn == null || hash == null) {
      return null;
    }
    return new ConsoleUser(name, hash, roles);
  }

  // ---- typed accessors: each reports its own error and returns null on failure ----

  private List<Entry> entries(Node node, String what) {
    if (!(node instanceof MappingNode m)) {
      typeError(node, what, "a mapping");
      return null;
    }
    Map<String, Node> seen = new HashMap<>();
    List<Entry> out = new ArrayList<>();
    for (NodeTuple t : m.getValue()) {
      Node k = t.getKeyNode();
      if (!(k instanceof ScalarNode ks)) {
        error(k, "keys in " + what + " must be plain names");
        continue;
      }
      Node first = seen.putIfAbsent(ks.getValue(), k);
      if (first != null) {
        error(k, "duplicate key '" + ks.getValue() + "' (first at line " + line(first) + ")");
        continue;
      }
      out.add(new Entry(ks.getValue(), k, t.getValueNode()));
    }
    return out;
  }

  private Map<String, Entry> fields(
      Node node, String what, List<String> allowed, List<String> required) {
    List<Entry> es = entries(node, what);
    if (es == null) {
      return null;
    }
    Map<String, Entry> out = new HashMap<>();
    for (Entry e : es) {
      if (allowed.contains(e.key())) {
        out.put(e.key(), e);
      } else {
        error(
            e.keyNode(),
            "unknown key '"
                + e.key()
                + "' in "
                + what
                + " (expected "
                + String.join(", ", allowed)
                + ")");
      }
    }
    for (String r : required) {
      if (!out.containsKey(r)) {
        error(node, what + " is missing required key '" + r + "'");
      }
    }
    return out;
  }

  // A tenant's name is the tenant part of its peers' certificates: the certificate name rule,
  // and never the host's own tenant.
  private boolean tenantName(Entry e) {
    if (!PeerIdentity.isName(e.key())) {
      error(
          e.keyNode(),
          "tenant name '"
              + e.key()
              + "' must be "
              + PeerIdentity.NAME_RULE_TEXT
              + " (the rule certificates follow)");
      return false;
    }
    if (e.key().equals(PeerIdentity.HOST_TENANT)) {
      error(
          e.keyNode(),
          "tenant name '"
              + PeerIdentity.HOST_TENANT
              + "' is reserved: host certificates are "
              + PeerIdentity.PREFIX
              + PeerIdentity.HOST_TENANT
              + "/...");
      return false;
    }
    return true;
  }

  private boolean name(Entry e, Pattern p, String what) {
    if (!p.matcher(e.key()).matches()) {
      error(e.keyNode(), what + " '" + e.key() + "' must match " + p.pattern());
      return false;
    }
    return true;
  }

  private List<Node> sequence(Node node, String what) {
    if (node instanceof SequenceNode s) {
      return s.getValue();
    }
    typeError(node, what, "a list");
    return null;
  }

  private List<Node> nonEmptySequence(Node node, String what) {
    List<Node> items = sequence(node, what);
    if (items != null && items.isEmpty()) {
      error(node, what + " must not be empty");
      return null;
    }
    return items;
  }

  private String string(Node node, String what) {
    if (!(node instanceof ScalarNode s)) {
      typeError(node, what, "a string");
      return null;
    }
    if (isEmpty(s)) {
      error(node, what + " must not be empty");
      return null;
    }
    return s.getValue();
  }

  private Integer integer(Node node, String what) {
    String s = plain(node, what, "a whole number");
    if (s == null) {
      return null;
    }
    if (!INTEGER.matcher(s).matches()) {
      error(node, what + " must be a whole number, found '" + s + "'");
      return null;
    }
    return Integer.parseInt(s);
  }

  private OptionalLong size(Node node, String what) {
    String s = plain(node, what, "a size");
    if (s == null) {
      return OptionalLong.empty();
    }
    OptionalLong bytes = Units.parseSize(s);
    if (bytes.isEmpty()) {
      error(node, "bad size '" + s + "' for " + what + ": " + Units.sizeProblem(s));
    }
    return bytes;
  }

  private java.time.Duration duration(Node node, String what) {
    String s = plain(node, what, "a duration");
    if (s == null) {
      return null;
    }
    java.time.Duration d = Units.parseDuration(s);
    if (d == null) {
      error(
          node,
          "bad duration '"
              + s
              + "' for "
              + what
              + " (a positive whole number with a unit ms, s, m, h or d, e.g. 10m, at most"
              + " 36500d)");
    }
    return d;
  }

  // Numbers, sizes and durations are written plain: a quoted "8" is text, and text where a
  // number belongs is a type error, as in any typed format.
  private String plain(Node node, String what, String expected) {
    String s = string(node, what);
    if (s != null && !((ScalarNode) node).isPlain()) {
      error(
          node,
          what + " must be " + expected + " written without quotes, found the text '" + s + "'");
      return null;
    }
    return s;
  }

  private void typeError(Node node, String what, String expected) {
    String found =
        switch (node.getNodeType()) {
          case MAPPING -> "a mapping";
          case SEQUENCE -> "a list";
          default -> node instanceof ScalarNode s && isEmpty(s) ? "nothing" : "a scalar";
        };
    error(node, what + " must be " + expected + ", found " + found);
  }

  // Every scalar is read as text and parsed here, so "empty" is judged on the text, whatever
  // tag the schema resolved: an empty plain scalar, `key: ~` or `key: null`.
  private static boolean isEmpty(ScalarNode s) {
    if (!s.isPlain()) {
      return false;
    }
    String v = s.getValue();
    return v.isEmpty() || v.equals("~") || v.equals("null") || v.equals("Null") || v.equals("NULL");
  }

  private static int line(Node n) {
    return n.getStartMark().map(m -> m.getLine() + 1).orElse(1);
  }

  private void error(Node node, String reason) {
    error(node.getStartMark().orElse(null), reason);
  }

  private void error(Mark mark, String reason) {
    // values are echoed in reasons; a hostile megabyte scalar must not become a megabyte message.
    // Escaped first (PolicyError would anyway), so that the cut bounds what is printed.
    reason = Printable.escape(reason);
    if (reason.length() > MAX_REASON_CHARS) {
      int end = MAX_REASON_CHARS;
      if (Character.isHighSurrogate(reason.charAt(end - 1))) {
        end--; // never half a pair
      }
      reason = reason.substring(0, end) + "...";
    }
    int line = mark == null ? 1 : mark.getLine() + 1;
    int column = mark == null ? 1 : mark.getColumn() + 1;
    errors.add(new PolicyError(source, line, column, reason));
  }
}
