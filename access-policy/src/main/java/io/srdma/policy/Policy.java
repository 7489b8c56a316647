package io.srdma.policy;

import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable, validated policy. Obtain one from {@link PolicyLoader}; install it in a {@link
 * GrantAuthority}.
 */
public final class Policy {
  /** The only policy file format version this build reads. */
  public static final int FORMAT_VERSION = 1;

  private final String source;
  private final String sha256;
  private final Map<String, Tenant> tenants;
  private final Map<String, ConsoleUser> consoleUsers;
  private final Map<String, Tenant> lookup;

  Policy(String source, String sha256, List<Tenant> tenants, List<ConsoleUser> consoleUsers) {
    this.source = source;
    this.sha256 = sha256;
    Map<String, Tenant> t = new LinkedHashMap<>();
    tenants.forEach(x -> t.put(x.name(), x));
    this.tenants = Collections.unmodifiableMap(t);
    this.lookup = new HashMap<>(t);
    Map<String, ConsoleUser> u = new LinkedHashMap<>();
    consoleUsers.forEach(x -> u.put(x.name(), x));
    this.consoleUsers = Collections.unmodifiableMap(u);
  }

  /** Where the policy came from (file name or label). */
  public String source() {
    return source;
  }

  /** SHA-256 (hex) of the policy text: identifies the version in force, e.g. in audit lines. */
  public String sha256() {
    return sha256;
  }

  /** Tenants by name, in file order. */
  public Map<String, Tenant> tenants() {
    return tenants;
  }

  /** The tenant of that name, or null (one plain hash lookup, for decisions). */
  Tenant tenant(String name) {
    return lookup.get(name);
  }

  /** Console users by name, in file order. */
  public Map<String, ConsoleUser> consoleUsers() {
    return consoleUsers;
  }

  @Override
  public String toString() {
    return "Policy["
        + source
        + ", sha256="
        + sha256.substring(0, 12)
        + ", "
        + tenants.size()
        + " tenants]";
  }
}
