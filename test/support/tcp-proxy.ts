import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real server, to make it unreachable on demand the ways networks fail:
 * refusing connections (`refuse`), accepting them and never answering (`blackhole`), or dropping
 * packets on the connections already open as well (`silence`).
 */
export interface TcpProxy {
  readonly port: number;
  /** Passes bytes again; connections `silence` held are connected onward and get what waited. */
  forward(): void;
  /** Drops every open connection and refuses new ones. */
  refuse(): Promise<void>;
  /** Drops every open connection; new ones are accepted and then ignored. */
  blackhole(): void;
  /**
   * Open connections stay open but pass nothing either way, and new ones are accepted and held:
   * what both ends see while a network drops packets. `forward()` delivers what waited, as TCP
   * retransmissions do once the network is back.
   */
  silence(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let mode: 'forward' | 'blackhole' | 'silent' = 'forward';
  const sockets = new Set<Socket>();
  /** Accepted while silent, not yet connected onward. */
  const held = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => {
      sockets.delete(socket);
      held.delete(socket);
    });
  };
  const dropAll = (): void => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    held.clear();
  };
  // Not pipe(): a silenced socket must stay paused until forward(), whatever its destination drains.
  const relay = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (mode === 'forward') from.resume();
    });
  };
  const connectOnward = (client: Socket): void => {
    const upstream = connect(targetPort, targetHost);
    track(upstream);
    relay(client, upstream);
    relay(upstream, client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  };
  const listen = async (): Promise<void> => {
    const listening = createServer((client) => {
      track(client);
      if (mode === 'blackhole') return;
      if (mode === 'silent') {
        client.pause();
        held.add(client);
        return;
      }
      connectOnward(client);
    });
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', resolve);
    });
    const address = listening.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    port = address.port;
    server = listening;
  };
  const stopListening = async (): Promise<void> => {
    const listening = server;
    server = undefined;
    if (listening) await new Promise((resolve) => listening.close(resolve));
  };

  await listen();
  return {
    get port() {
      return port;
    },
    forward() {
      const wasSilent = mode === 'silent';
      mode = 'forward';
      if (wasSilent) {
        const waiting = [...held];
        held.clear();
        for (const socket of sockets) if (!waiting.includes(socket)) socket.resume();
        for (const client of waiting) {
          connectOnward(client);
          client.resume();
        }
      }
      if (!server) void listen();
    },
    async refuse() {
      await Promise.all([stopListening(), Promise.resolve(dropAll())]);
    },
    blackhole() {
      mode = 'blackhole';
      dropAll();
      if (!server) void listen();
    },
    silence() {
      mode = 'silent';
      for (const socket of sockets) socket.pause();
      if (!server) void listen();
    },
    async close() {
      dropAll();
      await stopListening();
    },
  };
}
