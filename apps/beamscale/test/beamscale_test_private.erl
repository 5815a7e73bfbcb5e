%% Test helper: a file is private to its owner, seen as another local user sees it (issue 31).
-module(beamscale_test_private).
-export([check/1, check/2]).

%% `ok' when `File' is mode 0600 (nothing for group or others) and `nobody' cannot read it while
%% it can read a file of the default mode beside it (so the refusal is the file's mode, not a
%% directory `nobody' cannot reach); else what is wrong. The test's own directories may be out
%% of `nobody''s reach (a clone under `mktemp -d' is 0700): the file is then looked at through a
%% hard link (same inode, same mode) in a directory of /tmp that `nobody' can enter.
-spec check(file:filename()) -> ok | {atom(), term()}.
check(File) -> check(File, "nobody").

%% As `check/1', seen as the local user `User' (e.g. one `beamscale_test_user' made).
-spec check(file:filename(), string()) -> ok | {atom(), term()}.
check(File, User) ->
    {ok, Info} = file:read_file_info(File),
    Mode = element(8, Info) band 8#777,
    Seen = case seen(File, filename:dirname(File), User) of
               {_, false} -> via_link(File, User);
               S -> S
           end,
    case {Mode, Seen} of
        {8#600, {false, true}} -> ok;
        {8#600, {_, false}} -> {control_unreadable, File};
        {8#600, _} -> {nobody_reads, File};
        _ -> {mode, io_lib:format("~.8b", [Mode])}
    end.

%% Whether `nobody' reads `File', and a public file made in `Dir'.
seen(File, Dir, User) ->
    Control = filename:join(Dir, "control.public"),
    ok = file:write_file(Control, <<"public">>),
    ok = file:change_mode(Control, 8#644),
    Seen = {reads(User, File), reads(User, Control)},
    ok = file:delete(Control),
    Seen.

via_link(File, User) ->
    Dir = filename:join("/tmp", "beamscale-private-" ++ integer_to_list(erlang:unique_integer(
                                                                          [positive]))),
    ok = file:make_dir(Dir),
    ok = file:change_mode(Dir, 8#755),
    Link = filename:join(Dir, "linked"),
    try file:make_link(File, Link) of
        ok -> seen(Link, Dir, User);
        {error, Reason} -> {{no_link, Reason}, false}
    after
        _ = file:delete(Link),
        ok = file:del_dir(Dir)
    end.

reads(User, File) ->
    Port = open_port({spawn_executable, os:find_executable("runuser")},
                     [{args, ["-u", User, "--", "cat", File]}, exit_status,
                      stderr_to_stdout, binary]),
    status(Port) =:= 0.

status(Port) ->
    receive
        {Port, {data, _}} -> status(Port);
        {Port, {exit_status, S}} -> S
    after 10000 -> error(runuser_timeout)
    end.
