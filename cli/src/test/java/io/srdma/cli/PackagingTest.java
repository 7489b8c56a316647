package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.lang.model.SourceVersion;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * What a user's project sees of the build (README "Using the artifacts"): the BOM lists every
 * published module at the reactor's version, and every jar module names its Automatic-Module-Name.
 * Read from the poms, since the BOM has no parent and so nothing else keeps it in step. And the
 * SDK's public types say in their class comment who may call them from which thread and who owns
 * the buffers passed in and out (issue 18), read from the sources.
 */
class PackagingTest {
  /**
   * Reactor modules that are not published to users: the test rig and the BOM. (bench is published:
   * the cli artifact depends on it for srdma bench.)
   */
  private static final Set<String> UNPUBLISHED = Set.of("bom", "test-support");

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  private static Document pom(Path file) throws Exception {
    assertTrue(Files.isRegularFile(file), file + " missing");
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    return f.newDocumentBuilder().parse(file.toFile());
  }

  /** The text of the direct child {@code name} of {@code parent}, or null. */
  private static String child(Element parent, String name) {
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element && ((Element) n).getTagName().equals(name)) {
        return n.getTextContent().strip();
      }
    }
    return null;
  }

  private static List<String> modules(Document root) {
    List<String> out = new ArrayList<>();
    NodeList l = root.getElementsByTagName("module");
    for (int i = 0; i < l.getLength(); i++) {
      out.add(l.item(i).getTextContent().strip());
    }
    return out;
  }

  @Test
  void theBomListsEveryPublishedModuleAtTheReactorsVersionAndPinsNothingElse() throws Exception {
    Element root = pom(ROOT.resolve("pom.xml")).getDocumentElement();
    Element bom = pom(ROOT.resolve("bom/pom.xml")).getDocumentElement();
    assertTrue(modules(root.getOwnerDocument()).contains("bom"), "bom is a reactor module");
    // no parent: importing the BOM must not import the root's third-party pins
    assertEquals(null, child(bom, "parent"), "bom/pom.xml must not have a parent");
    assertEquals(child(root, "groupId"), child(bom, "groupId"));
    assertEquals(child(root, "version"), child(bom, "version"), "bom version = root version");
    assertEquals("pom", child(bom, "packaging"));

    Set<String> published = new TreeSet<>();
    for (String m : modules(root.getOwnerDocument())) {
      if (!UNPUBLISHED.contains(m)) {
        published.add(
            child(pom(ROOT.resolve(m).resolve("pom.xml")).getDocumentElement(), "artifactId"));
      }
    }
    Set<String> listed = new TreeSet<>();
    NodeList deps = bom.getElementsByTagName("dependency");
    for (int i = 0; i < deps.getLength(); i++) {
      Element d = (Element) deps.item(i);
      assertEquals(child(root, "groupId"), child(d, "groupId"), "only our artifacts in the BOM");
      assertEquals("${project.version}", child(d, "version"), child(d, "artifactId"));
      assertTrue(listed.add(child(d, "artifactId")), "listed twice: " + child(d, "artifactId"));
    }
    assertEquals(published, listed, "the BOM lists exactly the published modules");
  }

  @Test
  void everyJarModuleNamesADistinctAutomaticModuleName() throws Exception {
    Set<String> names = new HashSet<>();
    for (String m : modules(pom(ROOT.resolve("pom.xml")))) {
      if (m.equals("bom")) {
        continue;
      }
      Element project = pom(ROOT.resolve(m).resolve("pom.xml")).getDocumentElement();
      NodeList p = project.getElementsByTagName("srdma.module.name");
      assertEquals(1, p.getLength(), m + "/pom.xml must set srdma.module.name once");
      String name = p.item(0).getTextContent().strip();
      assertTrue(SourceVersion.isName(name), m + ": not a module name: " + name);
      assertTrue(name.startsWith("io.srdma."), m + ": " + name);
      assertTrue(names.add(name), m + ": module name used twice: " + name);
    }
    assertFalse(names.isEmpty());
  }

  /** The first top-level public type declaration of a source file. */
  private static final Pattern PUBLIC_TYPE =
      Pattern.compile(
          "(?m)^(?:@\\w+\\s+)*public (?:final |abstract )?(?:class|enum|interface|record) ");

  /**
   * The SDK's public types: every one in {@code io.srdma.channel} (the client and what it takes and
   * gives; not the wire-format packages {@code .record} and {@code .protocol}) and in {@code
   * io.srdma.host} (the host), and the two key-exchange types a client is configured with.
   */
  private static List<Path> sdkTypes() throws Exception {
    List<Path> out = new ArrayList<>();
    for (String dir :
        List.of(
            "secure-channel/src/main/java/io/srdma/channel",
            "secure-host/src/main/java/io/srdma/host")) {
      try (Stream<Path> files = Files.list(ROOT.resolve(dir))) {
        files.filter(f -> f.toString().endsWith(".java")).sorted().forEach(out::add);
      }
    }
    Path keys = ROOT.resolve("key-exchange/src/main/java/io/srdma/keys");
    out.add(keys.resolve("Credential.java"));
    out.add(keys.resolve("DeploymentTrust.java"));
    return out;
  }

  @Test
  void everyPublicSdkTypeStatesItsThreadSafetyAndBufferOwnership() throws Exception {
    List<String> missing = new ArrayList<>();
    int checked = 0;
    for (Path f : sdkTypes()) {
      String src = Files.readString(f);
      Matcher m = PUBLIC_TYPE.matcher(src);
      if (!m.find()) {
        continue; // package-private
      }
      checked++;
      int open = src.lastIndexOf("/**", m.start());
      String comment = open < 0 ? "" : src.substring(open, src.indexOf("*/", open));
      if (!comment.contains("Thread safety:") || !comment.contains("Buffers:")) {
        missing.add(ROOT.relativize(f).toString());
      }
    }
    assertTrue(
        checked >= 10, "found only " + checked + " public SDK types: has the package moved?");
    assertEquals(
        List.of(),
        missing,
        "class comments without a \"Thread safety:\" and a \"Buffers:\" sentence");
  }
}
