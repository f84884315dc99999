// csa-lint for VS Code: starts the csa-lsp language server for C and
// Fortran files and passes the `csa-lint.*` settings to it.
import * as vscode from 'vscode';
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  Trace,
} from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

/** The settings csa-lsp reads (initialization options and didChangeConfiguration). */
function serverSettings(): Record<string, unknown> {
  const c = vscode.workspace.getConfiguration('csa-lint');
  return {
    select: c.get('select'),
    extendSelect: c.get('extendSelect'),
    ignore: c.get('ignore'),
    defines: c.get('defines'),
    pureFunctions: c.get('pureFunctions'),
    disableLoopStorageCheck: c.get('disableLoopStorageCheck'),
    ivdepStyle: c.get('ivdepStyle'),
    configPath: c.get('configPath'),
  };
}

function createClient(): LanguageClient {
  const c = vscode.workspace.getConfiguration('csa-lint');
  const command = c.get<string>('server.path') || 'csa-lsp';
  const args = c.get<string[]>('server.args') || [];
  const serverOptions: ServerOptions = {
    run: { command, args },
    debug: { command, args },
  };
  const languages = ['c', 'fortran', 'fortran90', 'FortranFreeForm', 'FortranFixedForm'];
  const clientOptions: LanguageClientOptions = {
    documentSelector: languages.flatMap((language) => [
      { scheme: 'file', language },
      { scheme: 'untitled', language },
    ]),
    initializationOptions: serverSettings(),
    outputChannelName: 'csa-lint',
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher('**/{csa-lint,.csa-lint}.toml'),
    },
  };
  return new LanguageClient('csa-lint', 'csa-lint', serverOptions, clientOptions);
}

async function start(): Promise<void> {
  client = createClient();
  try {
    await client.start();
    const trace = vscode.workspace.getConfiguration('csa-lint').get<string>('trace.server');
    await client.setTrace(Trace.fromString(trace || 'off'));
  } catch (e) {
    vscode.window.showErrorMessage(
      `csa-lint: cannot start the language server (${e}). Install csa-lsp (cargo install --path server) or set "csa-lint.server.path".`,
    );
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand('csa-lint.restartServer', async () => {
      if (client) {
        await client.stop();
      }
      await start();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!client) {
        return;
      }
      if (e.affectsConfiguration('csa-lint.server')) {
        await client.stop();
        await start();
      } else if (e.affectsConfiguration('csa-lint')) {
        await client.sendNotification('workspace/didChangeConfiguration', {
          settings: { 'csa-lint': serverSettings() },
        });
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
  }
}
