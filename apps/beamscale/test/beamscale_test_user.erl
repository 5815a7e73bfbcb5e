%% Test helper: another local user, made for a test and removed after it (issue 55), and
%% commands run as that user (`runuser', the tests run as root).
-module(beamscale_test_user).
-export([create/0, remove/1, run/3, open/2, wait/2]).

%% A throwaway user of a unique name, without a home or a login shell.
-spec create() -> string().
create() ->
    Name = "bst" ++ integer_to_list(erlang:unique_integer([positive]) rem 1000000)
        ++ os:getpid(),
    {0, _} = exec("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", Name]),
    Name.

%% The user goes (even if a test that failed left one of its processes).
-spec remove(string()) -> ok.
remove(Name) ->
    {0, _} = exec("userdel", ["--force", Name]),
    ok.

%% `Prog Args' as `Name', to its end within `Ms': {ExitStatus, Output}.
-spec run(string(), [string()], timeout()) -> {integer(), binary()}.
run(Name, [Prog | Args], Ms) -> wait(open(Name, [Prog | Args]), Ms).

%% `Prog Args' as `Name' as a port (its output and exit status come as port messages), in /tmp
%% with HOME there (the user has no home).
-spec open(string(), [string()]) -> port().
open(Name, [Prog | Args]) ->
    open_port({spawn_executable, os:find_executable("runuser")},
              [{args, ["-u", Name, "--", "env", "HOME=/tmp", os:find_executable(Prog) | Args]},
               {cd, "/tmp"}, exit_status, stderr_to_stdout, binary]).

-spec wait(port(), timeout()) -> {integer(), binary()}.
wait(Port, Ms) -> wait(Port, Ms, <<>>).

wait(Port, Ms, Acc) ->
    receive
        {Port, {data, D}} -> wait(Port, Ms, <<Acc/binary, D/binary>>);
        {Port, {exit_status, S}} -> {S, Acc}
    after Ms -> error({no_exit, Acc})
    end.

exec(Prog, Args) ->
    wait(open_port({spawn_executable, os:find_executable(Prog)},
                   [{args, Args}, exit_status, stderr_to_stdout, binary]), 30000).
