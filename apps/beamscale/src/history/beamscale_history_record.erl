%% @doc One history record made from a run directory: its figures (`beamscale_history_metrics')
%% and the commit it measured. The commit is `--commit', else `git rev-parse HEAD' in `--repo
%% DIR', else the `git_revision' run.json recorded (beamscale's checkout the run came from: the
%% project itself when it measures its own commits). Date and branch likewise: flags, else git
%% in `--repo', else run.json's start time.
-module(beamscale_history_record).

-export([build/2, format_error/1]).

-define(GIT_TIMEOUT, 10000).
-define(MAX_TEXT, 200).

-type opts() :: #{commit => string(), date => string(), branch => string(), label => string(),
                  repo => string()}.

%% @doc The record of `Dir' (without `seq', which the store gives).
-spec build(file:filename(), opts()) -> {ok, map()} | {error, {module(), term()}}.
build(Dir, Opts) ->
    case beamscale_history_metrics:read(Dir) of
        {ok, #{kind := Kind, clock := Clock, run := Run, entries := Entries}} ->
            case commit(Opts, Run) of
                {ok, Commit} ->
                    {ok, #{<<"format">> => 1, <<"commit">> => Commit,
                           <<"date">> => date(Opts, Run), <<"branch">> => branch(Opts),
                           <<"label">> => text(maps:get(label, Opts, "")),
                           <<"recorded_at">> => beamscale_runinfo:now_iso(),
                           <<"run">> => text(filename:basename(filename:absname(Dir))),
                           <<"source">> => text(filename:absname(Dir)),
                           <<"kind">> => Kind, <<"clock">> => Clock,
                           <<"host">> => host(Run), <<"entries">> => Entries}};
                {error, _} = E -> E
            end;
        {error, _} = E -> E
    end.

%% @doc One line for an error of `build/2'.
-spec format_error(term()) -> iodata().
format_error({no_commit, Why}) ->
    ["no commit for the record (", Why, "): pass --commit HASH or --repo DIR"];
format_error({bad_commit, C}) ->
    ["--commit ", C, ": 1 to 64 letters, digits or . _ / - expected"];
format_error({git, Repo, Out}) ->
    io_lib:format("git rev-parse HEAD in ~ts failed: ~ts", [Repo, string:slice(Out, 0, 200)]).

%%% Internals

commit(#{commit := C}, _Run) ->
    case valid_commit(C) of
        true -> {ok, list_to_binary(C)};
        false -> {error, {?MODULE, {bad_commit, C}}}
    end;
commit(#{repo := Repo}, _Run) ->
    case git(Repo, ["rev-parse", "HEAD"]) of
        {ok, C} -> {ok, C};
        {error, Out} -> {error, {?MODULE, {git, Repo, Out}}}
    end;
commit(_Opts, #{<<"git_revision">> := C}) when is_binary(C), C =/= <<>> ->
    case valid_commit(binary_to_list(C)) of
        true -> {ok, C};
        false -> {error, {?MODULE, {no_commit, "run.json's git_revision is not a commit"}}}
    end;
commit(_Opts, _Run) -> {error, {?MODULE, {no_commit, "run.json records no git_revision"}}}.

valid_commit(C) ->
    length(C) >= 1 andalso length(C) =< 64
        andalso lists:all(fun(X) -> (X >= $0 andalso X =< $9) orelse (X >= $a andalso X =< $z)
                                        orelse (X >= $A andalso X =< $Z)
                                        orelse lists:member(X, "._/-")
                          end, C).

date(#{date := D}, _Run) -> text(D);
date(#{repo := Repo}, Run) ->
    case git(Repo, ["log", "-1", "--format=%cI"]) of
        {ok, D} -> D;
        {error, _} -> run_date(Run)
    end;
date(_Opts, Run) -> run_date(Run).

run_date(#{<<"started">> := S}) when is_binary(S) -> text(S);
run_date(#{<<"ended">> := S}) when is_binary(S) -> text(S);
run_date(_) -> beamscale_runinfo:now_iso().

branch(#{branch := B}) -> text(B);
branch(#{repo := Repo}) ->
    %% A detached HEAD (a CI checkout, a worktree of a commit) is on no branch.
    case git(Repo, ["rev-parse", "--abbrev-ref", "HEAD"]) of
        {ok, <<"HEAD">>} -> <<>>;
        {ok, B} -> B;
        {error, _} -> <<>>
    end;
branch(_) -> <<>>.

host(#{<<"host">> := H}) when is_binary(H) -> text(H);
host(_) -> <<>>.

git(Repo, Args) ->
    case os:find_executable("git") of
        false -> {error, "git is not on PATH"};
        Git ->
            case beamscale_os:cmd(Git, ["-C", Repo | Args], ?GIT_TIMEOUT) of
                {0, Out} -> {ok, text(string:trim(Out))};
                {_, Out} -> {error, unicode:characters_to_list(Out)}
            end
    end.

%% Texts from flags and files: characters, at most ?MAX_TEXT of them.
text(T) ->
    case unicode:characters_to_binary(T) of
        B when is_binary(B) -> unicode:characters_to_binary(string:slice(B, 0, ?MAX_TEXT));
        _ -> <<>>
    end.
