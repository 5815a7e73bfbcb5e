%% @doc Tsung XML files (docs/scenario.md, "Tsung XML"): read with xmerl keeping the line of every
%% element, translated by `beamscale_load_tsung_xml' into scenario entries and validated by
%% `beamscale_load_scenario:check/2', so a Tsung file becomes the same scenario map as a terms
%% file. The Erlang targets named by `<monitor type="erlang">' are in the map's `sample' key.
-module(beamscale_load_tsung).

-export([is_tsung/1, load/1, scan/1, from_text/2, warning_line/2, warnings/1, format_error/1]).

-include_lib("xmerl/include/xmerl.hrl").

%% The modules of xmerl a parse uses (`beamscale_load_bounded:load_code/1').
-define(XMERL, [xmerl_scan, xmerl_lib, xmerl_ucs]).

%% @doc Whether a scenario file is a Tsung XML file (by its `.xml' extension).
-spec is_tsung(file:filename()) -> boolean().
is_tsung(File) -> string:lowercase(filename:extension(File)) =:= ".xml".

%% @doc Read a Tsung file: the scenario and the settings ignored because they do not change the
%% load sent.
-spec load(file:filename()) ->
    {ok, beamscale_load_scenario:scenario(), [string()]} | {error, {module(), term()}}.
load(File) ->
    case beamscale_load_bounded:text(File) of
        {ok, Text} ->
            %% Parsed in a process of its own, bounded in heap and time: no file can grow or hang
            %% the node (docs/scenario.md, "What is refused").
            case beamscale_load_bounded:run(fun() -> from_text(File, Text) end,
                                            [{modules, ?XMERL}, beamscale_load]) of
                {error, {beamscale_load_bounded, _} = Why} ->
                    {error, {?MODULE, {File, 1, beamscale_load_bounded:format_error(Why)}}};
                Result -> Result
            end;
        {error, {Line, Msg}} -> {error, {?MODULE, {File, Line, Msg}}}
    end.

%% @doc The scenario of the Tsung XML text of the file `File'.
-spec from_text(file:filename(), string()) ->
    {ok, beamscale_load_scenario:scenario(), [string()]} | {error, {module(), term()}}.
from_text(File, Text) ->
    case scan(Text) of
        {ok, Root, Lines} ->
            case beamscale_load_tsung_xml:translate(Root, Lines, File) of
                {ok, #{entries := Entries, sample := Sample, warnings := Warnings} = T} ->
                    case beamscale_load_scenario:check(File, [entry(E) || E <- Entries]) of
                        {ok, Scenario} ->
                            Seed = [{seed, N} || N <- [maps:get(seed, T)], N =/= none],
                            {ok, maps:merge((drain(Scenario, Entries))#{sample => Sample},
                                            maps:merge(dump(Root), maps:from_list(Seed))),
                             beamscale_load_tsung_xml:ignored(Root, Lines) ++ Warnings
                             ++ dump_warnings(Root)};
                        {error, _} = Error -> Error
                    end;
                {error, {Line, Msg}} -> {error, {?MODULE, {File, Line, Msg}}}
            end;
        {error, {Line, Msg}} -> {error, {?MODULE, {File, Line, Msg}}}
    end.

%% Tsung's `dumptraffic' (true, light or protocol): a bounded dump, as `--dump 20'.
%% No `<load duration>': Tsung waits for the sessions in flight, here they have a drain that
%% covers the longest session's think times (`beamscale_load_steps:drain_s/1').
drain(#{sessions := Sessions} = Scenario, Entries) ->
    case lists:keymember(time_limit_s, 1, Entries) of
        true -> Scenario;
        false ->
            D = beamscale_load_steps:drain_s([S || #{steps := S} <- Sessions]),
            Scenario#{drain_s := D,
                      time_limit_s := beamscale_load_scenario:limit_s(Scenario, D)}
    end.

dump(Root) ->
    case beamscale_load_tsung_dom:attr(Root, dumptraffic, "false") of
        "false" -> #{};
        _ -> #{dump => 20}
    end.

%% Tsung's `light' cuts each dump to its first bytes and `protocol' and `protocol_local' write a
%% line of figures per request instead: here each is the whole-exchange dump, said so.
dump_warnings(Root) ->
    case beamscale_load_tsung_dom:attr(Root, dumptraffic, "false") of
        V when V =:= "false"; V =:= "true" -> [];
        V -> [lists:flatten(io_lib:format(
                 "not applied: <tsung dumptraffic=\"~ts\"> as Tsung has it; dumped as for "
                 "\"true\" (dump.log, the first 20 exchanges whole)", [V]))]
    end.

entry({Key, Value, Line}) ->
    #{key => Key, value => Value, line => Line, abs => erl_parse:abstract({Key, Value}, Line)}.

%% @doc Parse XML text into its root element and the line of every element. The DTD named by
%% `<!DOCTYPE>' is not fetched: the translation checks what it needs itself. What xmerl cannot
%% be given safely (entity declarations, names that are not Tsung's) is refused first by
%% `beamscale_load_tsung_guard'.
-spec scan(string()) ->
    {ok, #xmlElement{}, beamscale_load_tsung_xml:lines()} | {error, {non_neg_integer(), string()}}.
scan(Text) ->
    case beamscale_load_tsung_guard:check(Text) of
        ok -> xmerl(Text);
        {error, _} = Error -> Error
    end.

xmerl(Text) ->
    Opts = [{event_fun, fun event/2, #{}}, {hook_fun, fun hook/2}, {quiet, true},
            {fetch_fun, fun(_, S) -> {ok, not_fetched, S} end}, {validation, off}],
    try xmerl_scan:string(Text, Opts) of
        {{#xmlElement{} = Root, Lines}, Rest} ->
            case string:trim(Rest) of
                "" -> {ok, Root, Lines};
                _ -> {error, {0, "text after the root element"}}
            end
    catch
        exit:{fatal, {Reason, _File, {line, L}, _Col}} ->
            {error, {L, io_lib:format("not well-formed XML: ~0tp", [Reason])}};
        exit:Reason -> {error, {0, io_lib:format("not well-formed XML: ~0tp", [Reason])}};
        %% xmerl fails without a line on some inputs (a file of only a CDATA section).
        error:Reason -> {error, {1, io_lib:format("not well-formed XML (~0P)", [Reason, 8])}}
    end.

%% An element's line is where its start tag is; an empty element (`<a/>') only has an end event.
event(#xmerl_event{event = Ev, line = L, data = #xmlElement{name = N, pos = P, parents = Ps}},
      S) ->
    Lines = xmerl_scan:event_state(S),
    Key = [{N, P} | Ps],
    case Ev =:= started orelse not maps:is_key(Key, Lines) of
        true -> xmerl_scan:event_state(Lines#{Key => L}, S);
        false -> S
    end;
event(#xmerl_event{event = ended, line = L, data = #xmlPI{pos = P, parents = Ps}}, S) ->
    xmerl_scan:event_state((xmerl_scan:event_state(S))#{[{pi, P} | Ps] => L}, S);
event(_, S) -> S.

%% The root element is returned with the lines gathered by the events.
hook(#xmlElement{parents = []} = Root, S) -> {{Root, xmerl_scan:event_state(S)}, S};
hook(Entity, S) -> {Entity, S}.

%% @doc The warning lines: one listing the settings ignored as they change nothing sent, one
%% per setting that changes the load but is not applied (`not applied: ...'); empty when there
%% are none.
-spec warning_line(file:filename(), [string()]) -> iodata().
warning_line(File, Warnings) ->
    [io_lib:format("beamscale load: ~ts: ~ts~n", [File, W]) || W <- warnings(Warnings)].

%% @doc The warnings as `warning_line/2' prints them, without the file's name: kept in run.json.
-spec warnings([string()]) -> [binary()].
warnings(Warnings) ->
    {NotApplied, Ignored} = lists:partition(fun(W) -> lists:prefix("not applied: ", W) end,
                                            Warnings),
    [unicode:characters_to_binary(["ignored, as they do not change the load sent: ",
                                   lists:join(", ", Ignored)]) || Ignored =/= []]
        ++ [unicode:characters_to_binary(W) || W <- NotApplied].

%% @doc One line for an error: `FILE:LINE: message'.
-spec format_error({?MODULE, term()} | term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({File, Line, Msg}) -> io_lib:format("~ts:~b: ~ts", [File, Line, Msg]).
