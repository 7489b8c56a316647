package io.srdma.console;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The complete lines of a file, last first, read backwards a block at a time: what a newest-first
 * page of a large log needs, holding one block and one line. Bytes after the last newline (a line
 * being written) are no line. The file's size is taken when it is opened; what is appended later is
 * not read.
 */
final class ReverseLines implements Closeable {
  private final FileChannel channel;
  private final byte[] block;
  private final LineBuffer line;
  private long pos; // the bytes before pos are not read yet
  private int blockPos; // block[0, blockPos) is read but not yet looked at
  private boolean inLine; // a newline was seen: the bytes now gathered are a complete line
  private boolean done;

  ReverseLines(Path file, int blockBytes, int maxLineBytes) throws IOException {
    channel = FileChannel.open(file, StandardOpenOption.READ);
    block = new byte[blockBytes];
    line = new LineBuffer(maxLineBytes);
    pos = channel.size();
  }

  /** The line before the one returned last (the file's last complete line first), or null. */
  String previous() throws IOException {
    while (!done) {
      if (blockPos == 0) {
        if (pos == 0) {
          done = true;
          // the file's first line, if a newline ends it
          return inLine ? line.take() : null;
        }
        fill();
      }
      int i = blockPos - 1;
      while (i >= 0 && block[i] != '\n') {
        i--;
      }
      if (inLine) {
        line.prepend(block, i + 1, blockPos - i - 1);
      }
      if (i < 0) {
        blockPos = 0;
        continue;
      }
      blockPos = i; // past the newline
      if (inLine) {
        return line.take();
      }
      inLine = true; // what followed the last newline was a line being written
    }
    return null;
  }

  private void fill() throws IOException {
    int n = (int) Math.min(block.length, pos);
    pos -= n;
    ByteBuffer b = ByteBuffer.wrap(block, 0, n);
    while (b.hasRemaining()) {
      if (channel.read(b, pos + b.position()) < 0) {
        throw new IOException("the audit file shrank while it was read");
      }
    }
    blockPos = n;
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
