/// A file system object that exists but is not what was expected.
public struct FileSystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path in question.
    public let path: String
    /// What is wrong with it.
    public let problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String {
        "\(path): \(problem)"
    }
}
