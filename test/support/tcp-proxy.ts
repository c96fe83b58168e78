import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real server, to make it unreachable on demand the two ways networks
 * fail: refusing connections (`refuse`) or accepting them and never answering (`blackhole`).
 */
export interface TcpProxy {
  readonly port: number;
  forward(): void;
  /** Drops every open connection and refuses new ones. */
  refuse(): Promise<void>;
  /** Drops every open connection; new ones are accepted and then ignored. */
  blackhole(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let mode: 'forward' | 'blackhole' = 'forward';
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  };
  const dropAll = (): void => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  const listen = async (): Promise<void> => {
    const listening = createServer((client) => {
      track(client);
      if (mode === 'blackhole') return;
      const upstream = connect(targetPort, targetHost);
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
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
      mode = 'forward';
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
    async close() {
      dropAll();
      await stopListening();
    },
  };
}
