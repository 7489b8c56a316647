package io.srdma.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The tenant SDK stays lean (issues 17 and 18): a tenant that depends on {@code secure-channel}
 * must not get the host's libraries, so neither the access policy nor Apache Shiro (and its
 * password hashes), SnakeYAML (either flavour), Vert.x or Netty may be on this module's class path.
 *
 * <p>How it fails: Surefire runs this test on the module's <em>test</em> class path, which holds
 * every compile, runtime and test dependency, direct or transitive. Adding any of those libraries
 * back, in any scope (a dependency on {@code access-policy} or {@code secure-host}, a Vert.x
 * client, a test helper that drags Netty in) puts its jar and its classes there, and then both
 * checks below fail: a marker class of the library loads, and a jar of that name (or, for a module
 * of this build, its {@code target/classes}) is on the test class path Surefire reports in {@code
 * surefire.test.class.path}. The second check also catches a library whose marker class moved. (The
 * build-time rule {@code lean-tenant-dependencies} of the maven-enforcer checks the same from the
 * resolved dependency tree.)
 */
class LeanClasspathTest {
  /** A class each forbidden library cannot do without, by library. */
  private static final Map<String, List<String>> MARKERS =
      Map.of(
          "access-policy (io.srdma.policy)", List.of("io.srdma.policy.Policy"),
          "secure-host (io.srdma.host)", List.of("io.srdma.host.RegionHost"),
          "Apache Shiro",
              List.of("org.apache.shiro.SecurityUtils", "org.apache.shiro.crypto.hash.Hash"),
          "SnakeYAML", List.of("org.snakeyaml.engine.v2.api.Load", "org.yaml.snakeyaml.Yaml"),
          "Vert.x", List.of("io.vertx.core.Vertx"),
          "Netty", List.of("io.netty.buffer.ByteBuf", "io.netty.channel.Channel"));

  /** Parts of jar file names that give a forbidden library away. */
  private static final List<String> JAR_NAMES =
      List.of("access-policy", "secure-host", "shiro", "snakeyaml", "vertx", "netty");

  @Test
  void shouldLoadNoClassOfAHostOnlyLibrary() {
    ClassLoader loader = LeanClasspathTest.class.getClassLoader();
    List<String> loadable = new ArrayList<>();
    MARKERS.forEach(
        (library, classes) -> {
          for (String name : classes) {
            try {
              Class.forName(name, false, loader);
              loadable.add(library + ": " + name);
            } catch (ClassNotFoundException expected) {
              // absent, as it must be
            }
          }
        });
    assertEquals(
        List.of(), loadable, "the tenant SDK's class path holds classes of host-only libraries");
  }

  @Test
  void shouldHaveNoJarOfAHostOnlyLibraryOnTheClassPath() {
    // Surefire starts the JVM from a manifest-only jar: its java.class.path is that jar alone
    String classPath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path", ""));
    List<String> entries = List.of(classPath.split(File.pathSeparator));
    assertTrue(entries.size() > 1, "no class path to check: " + classPath);
    List<String> offending = new ArrayList<>();
    for (String entry : entries) {
      File f = new File(entry);
      String file = f.getName().toLowerCase(Locale.ROOT);
      if (!file.endsWith(".jar") && f.getParentFile() != null) {
        // a module of this build: .../<module>/target/classes
        File module = f.getParentFile().getParentFile();
        file = module == null ? file : module.getName().toLowerCase(Locale.ROOT);
      }
      for (String name : JAR_NAMES) {
        if (file.contains(name)) {
          offending.add(entry);
        }
      }
    }
    assertEquals(List.of(), offending, "host-only libraries on the tenant SDK's class path");
  }
}
