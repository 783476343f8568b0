import LinkJSON
import LinkSystem

/// What the emulated OS runs for this side: the app, or (phone) the app's File Provider
/// extension, which the system runs for a `fileprovider` push.
public enum InstalledProgramKind: String, CaseIterable, Sendable, Hashable {
    case app
    case fileProvider

    /// How `app.install` and the docs name it: `"app"`, or the extension's name.
    public var name: String { rawValue }
}

/// How the OS starts one installed program: `app.install {"command", "environment"?,
/// "workingDirectory"?}` or `--app-command` / `--app-arg`.
public struct InstalledProgram: Equatable, Sendable {
    /// The executable (an absolute path) and its arguments.
    public var command: [String]
    /// Added to the environment of an app process of this side.
    public var environment: [String: String]
    public var workingDirectory: String?

    public var executable: String { command[0] }

    /// A program whose executable exists and may be run; otherwise a message naming the path.
    public init(command: [String], environment: [String: String] = [:], workingDirectory: String? = nil) throws(InstallError) {
        guard let executable = command.first, !executable.isEmpty else {
            throw InstallError("'command' must name an executable: [\"/path/to/app\", \"arg\", ...]")
        }
        guard executable.hasPrefix("/") else {
            throw InstallError("the app's executable must be an absolute path, not '\(executable)'")
        }
        guard FileSystem.fileExists(executable) else { throw InstallError("the app's executable \(executable) does not exist") }
        guard ChildProcesses.isExecutable(executable) else {
            throw InstallError("the app's executable \(executable) is not an executable file (check its mode)")
        }
        if let workingDirectory {
            guard workingDirectory.hasPrefix("/"), FileSystem.directoryExists(workingDirectory) else {
                throw InstallError("'workingDirectory' \(workingDirectory) is not an existing directory's absolute path")
            }
        }
        for name in environment.keys where name.isEmpty || name.contains("=") {
            throw InstallError("'environment' has the variable name '\(name)': a name is not empty and has no '='")
        }
        self.command = command
        self.environment = environment
        self.workingDirectory = workingDirectory
    }

    var json: JSONValue {
        var object: JSONObject = [
            "command": .array(command.map(JSONValue.string)),
            "environment": .object(JSONObject(environment.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
        ]
        if let workingDirectory { object["workingDirectory"] = .string(workingDirectory) }
        return .object(object)
    }

    /// The program `json` describes, as `app.install`'s arguments or the state file hold it.
    init(json: JSONObject) throws(InstallError) {
        guard let values = json["command"]?.arrayValue else {
            throw InstallError("'command' must be an array of strings: [\"/path/to/app\", \"arg\", ...]")
        }
        var command: [String] = []
        for value in values {
            guard let text = value.stringValue else { throw InstallError("'command' holds \(value), not a string") }
            command.append(text)
        }
        var environment: [String: String] = [:]
        if let variables = json["environment"] {
            guard let object = variables.objectValue else { throw InstallError("'environment' must be an object of strings") }
            for (name, value) in object {
                guard let text = value.stringValue else { throw InstallError("'environment' variable \(name) is \(value), not a string") }
                environment[name] = text
            }
        }
        var directory: String?
        if let value = json["workingDirectory"] {
            guard let text = value.stringValue else { throw InstallError("'workingDirectory' must be a string") }
            directory = text
        }
        try self.init(command: command, environment: environment, workingDirectory: directory)
    }
}

/// Why a program cannot be installed, in words that name what was wrong.
public struct InstallError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The programs installed with `app.install`, kept in `STATE/apps.json` across restarts.
struct InstalledPrograms {
    let path: String

    func load() throws -> [InstalledProgramKind: InstalledProgram] {
        guard FileSystem.fileExists(path) else { return [:] }
        do {
            guard let object = try JSON.parse(FileSystem.readFile(path)).objectValue else { throw InstallError("not a JSON object") }
            var programs: [InstalledProgramKind: InstalledProgram] = [:]
            for (name, value) in object {
                guard let kind = InstalledProgramKind(rawValue: name), let description = value.objectValue else {
                    throw InstallError("'\(name)' is not an installed program")
                }
                programs[kind] = try InstalledProgram(json: description)
            }
            return programs
        } catch {
            throw StartupError("\(path) does not describe installed apps (\(error)); remove it, or install again")
        }
    }

    func save(_ programs: [InstalledProgramKind: InstalledProgram]) throws {
        let object = JSONObject(programs.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, $0.value.json) })
        try FileSystem.writeFileAtomically(path, Array(JSON.prettyPrinted(.object(object)).utf8), mode: 0o600)
    }
}
