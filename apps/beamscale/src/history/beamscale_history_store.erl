%% @doc The history store: a directory of plain files a team can keep in a branch or an artifact
%% (docs/history.md, "The store"). One JSON file per recorded run under `records/', named
%% `SEQ-COMMIT-RUN.json'; written to `records/.tmp-...' and renamed, so a crash mid-write leaves
%% a leftover temp file (ignored, and said) and every record complete. Appending holds `lock'
%% (made with O_EXCL, `beamscale_target_lock'): a second writer at once is refused, naming the
%% holder. A record is never overwritten: the same run of the same commit again is refused.
-module(beamscale_history_store).

-export([append/2, records/1, leftovers/1, format_error/1]).
-export_type([record/0]).

-type record() :: #{binary() => beamscale_format_json:json()}.

-define(FORMAT, <<"beamscale-history 1\n">>).
-define(MAX_RECORD, 64 * 1024 * 1024).
-define(MAX_RECORDS, 100000).
-define(TMP, ".tmp-").

%% @doc Append `Records' (each without `seq', which is given here) to the store `Dir', under
%% its lock; the file names written, in order. Nothing is written when one is refused.
-spec append(file:filename(), [record()]) ->
          {ok, [file:filename()]} | {error, {?MODULE, term()}}.
append(Dir, Records) ->
    Lock = filename:join(Dir, "lock"),
    case ensure(Dir) of
        ok ->
            Me = io_lib:format("history record of OS pid ~s (node ~ts)", [os:getpid(), node()]),
            case beamscale_target_lock:take(Lock, Me) of
                ok ->
                    try append_held(Dir, Records)
                    after beamscale_target_lock:release(Lock)
                    end;
                {in_use, Holder} -> {error, {?MODULE, {locked, Lock, Holder}}};
                {error, Why} -> {error, {?MODULE, {file, Lock, Why}}}
            end;
        {error, _} = E -> E
    end.

%% @doc Every record of the store, by `seq'.
-spec records(file:filename()) -> {ok, [record()]} | {error, {?MODULE, term()}}.
records(Dir) ->
    case check_format(Dir) of
        ok -> read_all(Dir, record_files(Dir));
        {error, _} = E -> E
    end.

%% @doc Temp files a crashed writer left: ignored by `records/1', named so a user can remove them.
-spec leftovers(file:filename()) -> [file:filename()].
leftovers(Dir) ->
    [filename:join([Dir, "records", F])
     || F <- lists:sort(filelib:wildcard(?TMP ++ "*", filename:join(Dir, "records")))].

%% @doc One line for an error of this module.
-spec format_error(term()) -> iodata().
format_error({locked, Lock, Holder}) ->
    io_lib:format("~ts: the store is being written by ~ts; wait for it (remove the lock file "
                  "only if that writer is gone)", [Lock, Holder]);
format_error({already_recorded, File}) ->
    [File, ": this run of this commit is recorded already; records are never overwritten"];
format_error({not_a_store, Dir}) ->
    [Dir, ": not a history store (no `format' file naming beamscale-history 1)"];
format_error({bad_record, File}) -> [File, ": not a history record (a JSON object with seq)"];
format_error({too_many, Dir}) ->
    io_lib:format("~ts: more than ~b records", [Dir, ?MAX_RECORDS]);
format_error({file, File, Why}) ->
    io_lib:format("~ts: ~ts", [File, beamscale_format_file:format_error(Why)]).

%%% Internals

ensure(Dir) ->
    Format = filename:join(Dir, "format"),
    case filelib:ensure_path(filename:join(Dir, "records")) of
        ok ->
            case filelib:is_regular(Format) of
                true -> check_format(Dir);
                false -> write_new(Format, ?FORMAT)
            end;
        {error, Why} -> {error, {?MODULE, {file, Dir, Why}}}
    end.

check_format(Dir) ->
    case beamscale_format_file:read(filename:join(Dir, "format"), 1024) of
        {ok, ?FORMAT} -> ok;
        _ -> {error, {?MODULE, {not_a_store, Dir}}}
    end.

append_held(Dir, Records) ->
    case read_all(Dir, record_files(Dir)) of
        {ok, Old} ->
            Seq0 = lists:max([0 | [S || #{<<"seq">> := S} <- Old]]),
            Named = [{name(Dir, Seq0 + I, R), R#{<<"seq">> => Seq0 + I}}
                     || {I, R} <- lists:enumerate(Records)],
            Taken = [{commit_run(R), name(Dir, S, R)} || #{<<"seq">> := S} = R <- Old],
            case refused(Named, maps:from_list(Taken)) of
                none -> {ok, [write(Dir, File, R) || {File, R} <- Named]};
                Existing -> {error, {?MODULE, {already_recorded, lists:flatten(Existing)}}}
            end;
        {error, _} = E -> E
    end.

%% The record file holding the commit and run of one of these already (or twice in this one).
refused([], _Taken) -> none;
refused([{File, R} | Rest], Taken) ->
    case maps:find(commit_run(R), Taken) of
        {ok, Existing} -> Existing;
        error -> refused(Rest, Taken#{commit_run(R) => File})
    end.

commit_run(R) -> {maps:get(<<"commit">>, R, null), maps:get(<<"run">>, R, null)}.

name(Dir, Seq, R) ->
    Commit = safe(maps:get(<<"commit">>, R), 12),
    Run = safe(maps:get(<<"run">>, R), 60),
    filename:join([Dir, "records",
                   io_lib:format("~8..0b-~ts-~ts.json", [Seq, Commit, Run])]).

%% A name part of file-name characters only.
safe(B, Max) ->
    Chars = [case C of
                 _ when C >= $a, C =< $z; C >= $A, C =< $Z; C >= $0, C =< $9; C =:= $.; C =:= $-;
                        C =:= $_ -> C;
                 _ -> $_
             end || C <- unicode:characters_to_list(B)],
    lists:sublist(Chars, Max).

write(Dir, File0, R) ->
    File = lists:flatten(File0),
    Tmp = filename:join([Dir, "records", ?TMP ++ filename:basename(File)]),
    ok = beamscale_format_file:written(file:write_file(Tmp, [beamscale_format_json:encode(R),
                                                            $\n]), Tmp),
    ok = beamscale_format_file:written(file:rename(Tmp, File), File),
    File.

write_new(File, Data) ->
    case file:write_file(File, Data, [exclusive]) of
        ok -> ok;
        {error, eexist} -> ok;
        {error, Why} -> {error, {?MODULE, {file, File, Why}}}
    end.

record_files(Dir) ->
    Records = filename:join(Dir, "records"),
    [filename:join(Records, F) || F <- lists:sort(filelib:wildcard("[0-9]*.json", Records))].

read_all(Dir, Files) when length(Files) > ?MAX_RECORDS -> {error, {?MODULE, {too_many, Dir}}};
read_all(_Dir, Files) ->
    try {ok, lists:sort(fun(#{<<"seq">> := A}, #{<<"seq">> := B}) -> A =< B end,
                        [read_one(F) || F <- Files])}
    catch throw:{error, _} = E -> E
    end.

read_one(File) ->
    case beamscale_format_file:read(File, ?MAX_RECORD) of
        {ok, Bin} ->
            case beamscale_format_json:decode(Bin) of
                {ok, #{<<"seq">> := S, <<"entries">> := Es} = R} when is_integer(S),
                                                                     is_list(Es) -> R;
                _ -> throw({error, {?MODULE, {bad_record, File}}})
            end;
        {error, {_, Why}} -> throw({error, {?MODULE, {file, File, Why}}})
    end.
