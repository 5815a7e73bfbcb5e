%% Test helper: a file is private to its owner, seen as another local user sees it (issue 31).
-module(beamscale_test_private).
-export([check/1]).

%% `ok' when `File' is mode 0600 (nothing for group or others) and `nobody' cannot read it while
%% it can read a file of the default mode beside it (so the refusal is the file's mode, not a
%% directory `nobody' cannot reach); else what is wrong.
-spec check(file:filename()) -> ok | {atom(), term()}.
check(File) ->
    {ok, Info} = file:read_file_info(File),
    Mode = element(8, Info) band 8#777,
    Control = filename:join(filename:dirname(File), "control.public"),
    ok = file:write_file(Control, <<"public">>),
    ok = file:change_mode(Control, 8#644),
    Seen = {nobody_reads(File), nobody_reads(Control)},
    ok = file:delete(Control),
    case {Mode, Seen} of
        {8#600, {false, true}} -> ok;
        {8#600, {_, false}} -> {control_unreadable, File};
        {8#600, _} -> {nobody_reads, File};
        _ -> {mode, io_lib:format("~.8b", [Mode])}
    end.

nobody_reads(File) ->
    Port = open_port({spawn_executable, os:find_executable("runuser")},
                     [{args, ["-u", "nobody", "--", "cat", File]}, exit_status,
                      stderr_to_stdout, binary]),
    status(Port) =:= 0.

status(Port) ->
    receive
        {Port, {data, _}} -> status(Port);
        {Port, {exit_status, S}} -> S
    after 10000 -> error(runuser_timeout)
    end.
