%% @doc What the two throwaway database servers (`beamscale_db': MariaDB, `beamscale_db_pg':
%% PostgreSQL) do alike with their files and processes: a private directory under /tmp when the
%% run's directory will not do, the last line of a log, random passwords, and stopping a server
%% by its pid.
-module(beamscale_db_files).

-export([tmp_dir/0, remove_tmp_dir/2, read_text/1, last_line/1, password/0, stop_pid/3,
         write_private/2]).

%% Every private directory's name starts so: only such a directory is ever removed.
-define(TMP_PREFIX, "beamscale-db-").

%% @doc A fresh directory's path under /tmp (not made): for a socket whose path in the run's
%% directory would be too long, or for the files of a server whose OS user cannot reach it.
-spec tmp_dir() -> file:filename().
tmp_dir() -> filename:join("/tmp", ?TMP_PREFIX ++ password()).

%% @doc Remove `Path' when it is one of `tmp_dir/0''s directories and not the run's `Dir'.
-spec remove_tmp_dir(file:filename(), file:filename()) -> ok.
remove_tmp_dir(Dir, Dir) -> ok;
remove_tmp_dir(Path, _Dir) ->
    case {filename:dirname(Path), filename:basename(Path)} of
        {"/tmp", ?TMP_PREFIX ++ _} -> _ = file:del_dir_r(Path), ok;
        _ -> ok
    end.

%% @doc A file's text, or "" when it cannot be read (a log not written yet).
-spec read_text(file:filename()) -> string().
read_text(File) ->
    case file:read_file(File) of
        {ok, B} -> unicode:characters_to_list(B);
        {error, _} -> ""
    end.

%% @doc The last line of `Text' that is not blank: what a server said last before it failed.
-spec last_line(unicode:chardata()) -> string().
last_line(Text) ->
    case [L || L <- string:lexemes(unicode:characters_to_list(Text), "\n"),
               string:trim(L) =/= ""] of
        [] -> "(no output)";
        Lines -> lists:last(Lines)
    end.

%% @doc Write `Data' to `File' readable by its owner only (0600): it holds a password, and a
%% file of the default mode (0644) let another local user log in to the database. An older
%% file is removed first (another user may hold it open); the new one is empty until its mode
%% is set, so no one else ever opens it with the password in it.
-spec write_private(file:filename(), iodata()) -> ok | {error, file:posix()}.
write_private(File, Data) ->
    _ = file:delete(File),
    maybe_ok([fun() -> file:write_file(File, <<>>, [exclusive]) end,
              fun() -> file:change_mode(File, 8#600) end,
              fun() -> file:write_file(File, Data) end]).

maybe_ok([]) -> ok;
maybe_ok([F | Rest]) ->
    case F() of
        ok -> maybe_ok(Rest);
        {error, _} = E -> E
    end.

%% @doc Letters and digits only, so it needs no quoting in SQL, shell or config files.
-spec password() -> string().
password() ->
    [C || <<C>> <= base64:encode(beamscale_os:random_bytes(15)),
          (C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z) orelse
          (C >= $0 andalso C =< $9)].

%% @doc Send `Signal' (the server's own clean shutdown) to `Pid', and KILL when it is still there
%% after `Timeout' ms.
-spec stop_pid(string(), string(), pos_integer()) -> stopped.
stop_pid(Pid, Signal, Timeout) ->
    beamscale_os:signal(Pid, Signal),
    case beamscale_os:wait_gone(Pid, Timeout) of
        ok -> stopped;
        timeout ->
            beamscale_os:signal(Pid, "KILL"),
            ok = beamscale_os:wait_gone(Pid, Timeout),
            stopped
    end.
